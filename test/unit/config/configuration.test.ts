// The configuration module fails fast by variable name, and docs/configuration.md documents every variable it reads.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../../src/config';

const projectRoot = path.resolve(__dirname, '../../..');
const configSource = fs.readFileSync(path.join(projectRoot, 'src/config.ts'), 'utf8');
const readme = fs.readFileSync(path.join(projectRoot, 'docs', 'configuration.md'), 'utf8');

const minimalEnvironment = {
  DATABASE_URL: 'postgres://user:password@127.0.0.1:5432/bookings',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: Buffer.alloc(32, 2).toString('base64'),
  GRPC_INSECURE: 'true',
};

function configErrorOf(environment: Record<string, string>): ConfigError {
  try {
    loadConfig(environment);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('configuration', () => {
  it('loads with only the required variables set', () => {
    const config = loadConfig(minimalEnvironment);
    expect(config.http.port).toBe(8080);
    expect(config.booking.holdDurationSeconds).toBe(900);
  });

  it.each([
    ['DATABASE_URL', { DATABASE_URL: '' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://nope' }],
    ['HTTP_PORT', { HTTP_PORT: 'eighty' }],
    ['HTTP_PORT', { HTTP_PORT: '70000' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['WORKER_TASK_QUEUES', { WORKER_TASK_QUEUES: 'bookings,unknown-queue' }],
  ])('names %s when it is missing or malformed', (variable, override) => {
    const error = configErrorOf({ ...minimalEnvironment, ...override });
    expect(error.variable).toBe(variable);
    expect(error.message).toContain(variable);
  });

  it('documents every variable it reads in docs/configuration.md', () => {
    const variables = new Set(
      [...configSource.matchAll(/'([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)].map((match) => match[1]),
    );
    expect(variables.size).toBeGreaterThan(40);
    const undocumented = [...variables].filter((variable) => !readme.includes(`\`${variable}\``));
    expect(undocumented).toEqual([]);
  });
});
