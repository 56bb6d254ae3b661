// Keys for the embedded stack, generated once into the data folder so a restart still reads its own data.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface DevelopmentSecrets {
  ENCRYPTION_KEYS: string;
  ENCRYPTION_ACTIVE_KEY_ID: string;
  BLIND_INDEX_KEY: string;
}

function generate(): DevelopmentSecrets {
  return {
    ENCRYPTION_KEYS: `dev1:${crypto.randomBytes(32).toString('base64')}`,
    ENCRYPTION_ACTIVE_KEY_ID: 'dev1',
    BLIND_INDEX_KEY: crypto.randomBytes(32).toString('base64'),
  };
}

export function loadOrCreateDevelopmentSecrets(dataDirectory: string): DevelopmentSecrets {
  const file = path.join(dataDirectory, 'secrets.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as DevelopmentSecrets;
  const secrets = generate();
  fs.writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}
