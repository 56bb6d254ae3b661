// The Temporal connection settings (TEMPORAL_TLS*, TEMPORAL_API_KEY): refusals by variable name, the options both SDK
// connections get, and no key in any log line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { ConfigError, loadConfig, plaintextTemporalEnvironment } from '../../../src/config';
import { createLogger } from '../../../src/logger';
import {
  describeTemporalConnection,
  temporalConnectionOptions,
} from '../../../src/security/temporal-connection';
import {
  createCertificateAuthority,
  issueCertificate,
  type CertificateFiles,
} from '../../../dev/stack/development-certificates';

const minimalEnvironment = {
  DATABASE_URL: 'postgres://user:password@127.0.0.1:5432/bookings',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: Buffer.alloc(32, 2).toString('base64'),
  GRPC_INSECURE: 'true',
  TEMPORAL_ADDRESS: 'temporal.example.internal:7233',
};

const apiKey = 'tmprl-test-api-key.abc123';

let directory: string;
let authority: CertificateFiles;
let client: CertificateFiles;
let otherClient: CertificateFiles;
let notPem: string;
let brokenPem: string;

beforeAll(() => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-connection-'));
  authority = createCertificateAuthority(directory, { name: 'ca', commonName: 'Temporal Test CA' });
  client = issueCertificate(authority, directory, {
    name: 'client',
    commonName: 'bookings',
    usage: 'client',
  });
  otherClient = issueCertificate(authority, directory, {
    name: 'other',
    commonName: 'someone-else',
    usage: 'client',
  });
  notPem = path.join(directory, 'not-pem.txt');
  fs.writeFileSync(notPem, 'just some text\n');
  brokenPem = path.join(directory, 'broken.pem');
  fs.writeFileSync(
    brokenPem,
    '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n',
  );
});

afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

/** The refusal a process meets at start: reading the configuration, then the files it names. */
function refusal(environment: Record<string, string>): ConfigError {
  try {
    temporalConnectionOptions(loadConfig({ ...minimalEnvironment, ...environment }).temporal);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the environment was accepted');
}

function optionsFor(environment: Record<string, string>) {
  return temporalConnectionOptions(loadConfig({ ...minimalEnvironment, ...environment }).temporal);
}

describe('Temporal connection configuration', () => {
  it('connects in plaintext with nothing but an address', () => {
    expect(optionsFor({})).toEqual({ address: 'temporal.example.internal:7233' });
  });

  it('turns TLS on with the system roots when TEMPORAL_TLS is true', () => {
    expect(optionsFor({ TEMPORAL_TLS: 'true' })).toEqual({
      address: 'temporal.example.internal:7233',
      tls: {},
    });
  });

  it('passes the server CA, the client certificate and key, and the server name for mutual TLS', () => {
    const options = optionsFor({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: authority.certificate,
      TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate,
      TEMPORAL_TLS_CLIENT_KEY_PATH: client.privateKey,
      TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.internal',
    });
    expect(options).toEqual({
      address: 'temporal.example.internal:7233',
      tls: {
        serverRootCACertificate: fs.readFileSync(authority.certificate),
        clientCertPair: { crt: fs.readFileSync(client.certificate), key: fs.readFileSync(client.privateKey) },
        serverNameOverride: 'frontend.temporal.internal',
      },
    });
  });

  it('implies TLS from any TLS setting, with TEMPORAL_TLS unset', () => {
    expect(optionsFor({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: authority.certificate }).tls).toEqual({
      serverRootCACertificate: fs.readFileSync(authority.certificate),
    });
    expect(optionsFor({ TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.internal' }).tls).toEqual({
      serverNameOverride: 'frontend.temporal.internal',
    });
  });

  it("takes the PEMs inline from the _DATA variables of Temporal's environment configuration", () => {
    // An environment variable's surrounding white space never counts, a PEM's final newline included.
    const pem = (file: string) => fs.readFileSync(file, 'utf8').trim();
    const options = optionsFor({
      TEMPORAL_TLS_SERVER_CA_CERT_DATA: pem(authority.certificate),
      TEMPORAL_TLS_CLIENT_CERT_DATA: pem(client.certificate),
      TEMPORAL_TLS_CLIENT_KEY_DATA: pem(client.privateKey),
    });
    expect(options.tls).toEqual({
      serverRootCACertificate: Buffer.from(pem(authority.certificate)),
      clientCertPair: { crt: Buffer.from(pem(client.certificate)), key: Buffer.from(pem(client.privateKey)) },
    });
    expect(
      refusal({
        TEMPORAL_TLS_CLIENT_CERT_DATA: pem(client.certificate),
        TEMPORAL_TLS_CLIENT_KEY_DATA: pem(otherClient.privateKey),
      }).variable,
    ).toBe('TEMPORAL_TLS_CLIENT_KEY_DATA');
  });

  it('sends an API key over TLS, which the key alone turns on (Temporal Cloud)', () => {
    expect(optionsFor({ TEMPORAL_API_KEY: apiKey })).toEqual({
      address: 'temporal.example.internal:7233',
      tls: {},
      apiKey,
    });
    expect(optionsFor({ TEMPORAL_API_KEY: apiKey, TEMPORAL_TLS: 'true' }).apiKey).toBe(apiKey);
  });

  it('leaves the server name to the host of TEMPORAL_ADDRESS when TEMPORAL_TLS_SERVER_NAME is unset', () => {
    const options = optionsFor({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: authority.certificate });
    expect(options.tls).not.toHaveProperty('serverNameOverride');
    expect(loadConfig({ ...minimalEnvironment, TEMPORAL_TLS: 'true' }).temporal.tls).not.toHaveProperty(
      'serverName',
    );
  });

  it('stays plaintext when TEMPORAL_TLS is false and nothing else is set', () => {
    expect(optionsFor({ TEMPORAL_TLS: 'false' })).toEqual({ address: 'temporal.example.internal:7233' });
  });

  it('gives an embedded stack plaintext whatever TLS settings and API key the shell holds for another cluster', () => {
    const shell = {
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: authority.certificate,
      TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate,
      TEMPORAL_TLS_CLIENT_KEY_PATH: client.privateKey,
      TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.internal',
      TEMPORAL_API_KEY: apiKey,
    };
    expect(optionsFor({ ...shell, ...plaintextTemporalEnvironment })).toEqual({
      address: 'temporal.example.internal:7233',
    });
  });

  it.each<[string, () => Record<string, string>]>([
    ['TEMPORAL_TLS', () => ({ TEMPORAL_TLS: 'yes-please' })],
    [
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
      () => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(directory, 'missing-ca.crt') }),
    ],
    ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', () => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: notPem })],
    ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', () => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: brokenPem })],
    ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', () => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: client.privateKey })],
    ['TEMPORAL_TLS_CLIENT_KEY_PATH', () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate })],
    ['TEMPORAL_TLS_CLIENT_CERT_PATH', () => ({ TEMPORAL_TLS_CLIENT_KEY_PATH: client.privateKey })],
    [
      'TEMPORAL_TLS_CLIENT_CERT_PATH',
      () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: notPem, TEMPORAL_TLS_CLIENT_KEY_PATH: client.privateKey }),
    ],
    [
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate, TEMPORAL_TLS_CLIENT_KEY_PATH: notPem }),
    ],
    [
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      () => ({
        TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate,
        TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(directory, 'missing.key'),
      }),
    ],
    [
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      () => ({
        TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate,
        TEMPORAL_TLS_CLIENT_KEY_PATH: otherClient.privateKey,
      }),
    ],
    ['TEMPORAL_API_KEY', () => ({ TEMPORAL_API_KEY: apiKey, TEMPORAL_TLS: 'false' })],
    [
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
      () => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: authority.certificate, TEMPORAL_TLS: 'false' }),
    ],
    ['TEMPORAL_TLS_SERVER_NAME', () => ({ TEMPORAL_TLS_SERVER_NAME: 'https://frontend:7233' })],
    ['TEMPORAL_API_KEY', () => ({ TEMPORAL_API_KEY: 'two words' })],
    ['TEMPORAL_TLS', () => ({ TEMPORAL_TLS: 'maybe' })],
    [
      'TEMPORAL_TLS_CLIENT_CERT_DATA',
      () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate, TEMPORAL_TLS_CLIENT_CERT_DATA: 'pem' }),
    ],
    ['TEMPORAL_TLS_DISABLE_HOST_VERIFICATION', () => ({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' })],
  ])('refuses a bad %s by name', (variable, environment) => {
    const error = refusal(environment());
    expect(error.variable).toBe(variable);
    expect(error.message).toContain(variable);
  });

  it('never quotes the API key or the private key in a refusal', () => {
    const spacedKey = 'secret-part another-secret-part';
    expect(refusal({ TEMPORAL_API_KEY: spacedKey }).message).not.toContain('secret-part');
    expect(refusal({ TEMPORAL_API_KEY: apiKey, TEMPORAL_TLS: '0' }).message).not.toContain(apiKey);
    const keyPem = fs.readFileSync(client.privateKey, 'utf8');
    const keyBody = keyPem.split('\n')[1];
    const wrongKey = refusal({
      TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate,
      TEMPORAL_TLS_CLIENT_KEY_PATH: otherClient.privateKey,
    });
    expect(wrongKey.message).not.toContain(keyBody);
  });

  it('logs how the connection is secured, never the API key or the private key', () => {
    const config = loadConfig({
      ...minimalEnvironment,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: authority.certificate,
      TEMPORAL_TLS_CLIENT_CERT_PATH: client.certificate,
      TEMPORAL_TLS_CLIENT_KEY_PATH: client.privateKey,
      TEMPORAL_API_KEY: apiKey,
    });
    expect(describeTemporalConnection(config.temporal)).toEqual({
      address: 'temporal.example.internal:7233',
      transport: 'mutual TLS',
      apiKey: true,
    });
    const lines: string[] = [];
    const logger = createLogger(
      { level: 'info', name: 'capture' },
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          lines.push(chunk.toString('utf8'));
          callback();
        },
      }),
    );
    // Even a careless log line of the whole settings keeps both keys out.
    logger.info(describeTemporalConnection(config.temporal), 'Temporal frontend');
    logger.info({ temporal: config.temporal }, 'settings');
    const output = lines.join('');
    expect(output).toContain('mutual TLS');
    expect(output).not.toContain(apiKey);
    const keyBytes = JSON.stringify([...fs.readFileSync(client.privateKey).subarray(0, 24)]).slice(1, -1);
    expect(output).not.toContain(keyBytes);
  });
});
