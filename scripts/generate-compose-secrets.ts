// Writes the compose stack's `.env`: deploy/compose.env.example with every secret replaced by a fresh random value.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const examplePath = path.join(root, 'deploy', 'compose.env.example');
const target = path.resolve(process.argv[2] ?? path.join(root, '.env'));

/** URL-safe, so a password can sit in DATABASE_URL without percent-encoding. */
function password(): string {
  return crypto.randomBytes(24).toString('base64url');
}

function key(): string {
  return crypto.randomBytes(32).toString('base64');
}

const keyId = `key-${new Date().toISOString().slice(0, 7)}`;
const secrets: Record<string, string> = {
  POSTGRES_PASSWORD: password(),
  BOOKING_DB_PASSWORD: password(),
  TEMPORAL_DB_PASSWORD: password(),
  ENCRYPTION_KEYS: `${keyId}:${key()}`,
  ENCRYPTION_ACTIVE_KEY_ID: keyId,
  BLIND_INDEX_KEY: key(),
  GRAFANA_ADMIN_PASSWORD: password(),
};

if (fs.existsSync(target)) {
  // A second run must never replace keys that already encrypt data, nor passwords already set in PostgreSQL.
  process.stderr.write(
    `${target} exists and is left as it is: its keys may already encrypt data. Delete it first to start afresh.\n`,
  );
  process.exit(1);
}

const seen = new Set<string>();
const lines = fs
  .readFileSync(examplePath, 'utf8')
  .split('\n')
  .map((line) => {
    const name = /^([A-Z0-9_]+)=/.exec(line)?.[1];
    if (name === undefined || secrets[name] === undefined) return line;
    seen.add(name);
    return `${name}=${secrets[name]}`;
  });
const missing = Object.keys(secrets).filter((name) => !seen.has(name));
if (missing.length > 0) {
  process.stderr.write(`${examplePath} has no line for ${missing.join(', ')}\n`);
  process.exit(1);
}
fs.writeFileSync(target, lines.join('\n'), { mode: 0o600 });
process.stdout.write(
  `wrote ${target} with fresh secrets (${Object.keys(secrets).join(', ')}); keep it safe\n`,
);
