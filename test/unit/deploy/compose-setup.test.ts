// The compose stack's set-up scripts: fresh secrets in .env, and Temporal certificates fit for mutual and internode TLS.
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCertificateAuthority, issueCertificate } from '../../../dev/stack/development-certificates';

const root = path.resolve(__dirname, '..', '..', '..');
const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
const secretNames = [
  'POSTGRES_PASSWORD',
  'BOOKING_DB_PASSWORD',
  'TEMPORAL_DB_PASSWORD',
  'ENCRYPTION_KEYS',
  'ENCRYPTION_ACTIVE_KEY_ID',
  'BLIND_INDEX_KEY',
  'GRAFANA_ADMIN_PASSWORD',
];

jest.setTimeout(60_000);

let directory: string;
beforeEach(() => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-setup-'));
});
afterEach(() => {
  fs.rmSync(directory, { recursive: true, force: true });
});

function readEnv(file: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (match) values.set(match[1], match[2]);
  }
  return values;
}

describe('npm run compose:secrets', () => {
  it("writes every secret fresh, owner-readable only, and the example file's other settings unchanged", () => {
    const first = path.join(directory, 'first.env');
    const second = path.join(directory, 'second.env');
    execFileSync(tsx, ['scripts/generate-compose-secrets.ts', first], { cwd: root });
    execFileSync(tsx, ['scripts/generate-compose-secrets.ts', second], { cwd: root });
    const example = readEnv(path.join(root, 'deploy', 'compose.env.example'));
    const [one, two] = [readEnv(first), readEnv(second)];

    for (const name of secretNames) {
      expect(one.get(name)).not.toBe(example.get(name));
      if (name !== 'ENCRYPTION_ACTIVE_KEY_ID') expect(one.get(name)).not.toBe(two.get(name));
    }
    const [keyId, key] = (one.get('ENCRYPTION_KEYS') ?? '').split(':');
    expect(keyId).toBe(one.get('ENCRYPTION_ACTIVE_KEY_ID'));
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(Buffer.from(one.get('BLIND_INDEX_KEY') ?? '', 'base64')).toHaveLength(32);
    // A password goes into DATABASE_URL as it is: no character that would need percent-encoding.
    expect(one.get('BOOKING_DB_PASSWORD')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(one.get('TEMPORAL_NAMESPACE')).toBe(example.get('TEMPORAL_NAMESPACE'));
    expect(fs.statSync(first).mode & 0o777).toBe(0o600);
  });

  it('refuses to replace an existing .env, whose keys may already encrypt data', () => {
    const target = path.join(directory, '.env');
    fs.writeFileSync(target, 'ENCRYPTION_KEYS=in-use\n');
    const run = spawnSync(tsx, ['scripts/generate-compose-secrets.ts', target], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${target} exists and is left as it is`);
    expect(fs.readFileSync(target, 'utf8')).toBe('ENCRYPTION_KEYS=in-use\n');
  });
});

describe('issueCertificate', () => {
  it("gives a server-and-client certificate both extended key usages, as Temporal's internode TLS needs", () => {
    const authority = createCertificateAuthority(directory, { name: 'ca', commonName: 'Test CA' });
    const issued = issueCertificate(authority, directory, {
      name: 'temporal',
      commonName: 'temporal',
      usage: 'server-and-client',
      dnsNames: ['temporal'],
    });
    const certificate = new crypto.X509Certificate(fs.readFileSync(issued.certificate));
    expect(certificate.keyUsage).toEqual(expect.arrayContaining(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']));
    expect(certificate.checkIssued(new crypto.X509Certificate(fs.readFileSync(authority.certificate)))).toBe(
      true,
    );
  });
});
