// The settings table fails fast by variable name (bad values, bounds, cross-field rules), and docs/configuration.md
// carries the reference generated from it.
import fs from 'node:fs';
import Koa from 'koa';
import { ConfigError, loadConfig, schemaSections, type SettingTable } from '../../../src/config';
import { createRestServer } from '../../../src/api/rest/server';
import {
  configurationReference,
  referenceFile,
  regeneratedReference,
} from '../../../scripts/generate-config-docs';

const minimalEnvironment = {
  DATABASE_URL: 'postgres://user:password@127.0.0.1:5432/bookings',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: Buffer.alloc(32, 2).toString('base64'),
  GRPC_INSECURE: 'true',
};

function configErrorOf(environment: Record<string, string>): ConfigError {
  try {
    loadConfig({ ...minimalEnvironment, ...environment });
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
    expect(config.temporal).toEqual({ address: '127.0.0.1:7233', namespace: 'default' });
  });

  it.each([
    ['DATABASE_URL', { DATABASE_URL: '' }, 'is required but not set'],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://nope' }, 'must be a postgres:// URL'],
    ['ENCRYPTION_KEYS', { ENCRYPTION_KEYS: '  ' }, 'is required but not set'],
    ['HTTP_PORT', { HTTP_PORT: 'eighty' }, 'must be a whole number, got "eighty"'],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }, 'must be one of fatal, error, warn, info, debug, trace, silent'],
    ['GRPC_INSECURE', { GRPC_INSECURE: 'yes' }, 'must be true or false, got "yes"'],
    ['OIDC_ISSUER', { OIDC_ISSUER: 'ftp://issuer' }, 'must be an http(s) URL, got "ftp://issuer"'],
    [
      'WORKER_TASK_QUEUES',
      { WORKER_TASK_QUEUES: 'bookings,unknown-queue' },
      'names unknown value "unknown-queue" (known: bookings, booking-seats, booking-payments, booking-notifications)',
    ],
    ['TEMPORAL_TLS', { TEMPORAL_TLS: 'maybe' }, 'must be true or false, got "maybe"'],
    ['WEBHOOK_ALLOW_HTTP', { WEBHOOK_ALLOW_HTTP: 'sometimes' }, 'must be true or false, got "sometimes"'],
    [
      'WEBHOOK_RETRY_SCHEDULE_SECONDS',
      { WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,5,-1' },
      'must be comma-separated whole numbers of seconds, got "0,5,-1"',
    ],
    [
      'WEBHOOK_RETRY_SCHEDULE_SECONDS',
      { WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,1.5' },
      'must be comma-separated whole numbers of seconds, got "0,1.5"',
    ],
    [
      'WEBHOOK_RETRY_SCHEDULE_SECONDS',
      { WEBHOOK_RETRY_SCHEDULE_SECONDS: '5,300' },
      'must start with 0: the first attempt is made at once',
    ],
  ])('names %s when it is missing or malformed', (variable, override, problem) => {
    const error = configErrorOf(override);
    expect(error.variable).toBe(variable);
    expect(error.message).toBe(`configuration: ${variable} ${problem}`);
  });

  it('reads the partner webhook settings, defaults first', () => {
    expect(loadConfig(minimalEnvironment).webhooks).toEqual({
      allowHttp: false,
      allowList: [],
      retryScheduleSeconds: [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
    });
    expect(
      loadConfig({
        ...minimalEnvironment,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_LIST: '127.0.0.1/32, receiver.internal',
        WEBHOOK_RETRY_SCHEDULE_SECONDS: '0, 1,2',
      }).webhooks,
    ).toEqual({
      allowHttp: true,
      allowList: ['127.0.0.1/32', 'receiver.internal'],
      retryScheduleSeconds: [0, 1, 2],
    });
  });

  it.each([
    ['HTTP_PORT', '70000', 'must be between 0 and 65535, got 70000'],
    ['IDEMPOTENCY_KEY_RETENTION_HOURS', '23', 'must be between 24 and 8760, got 23'],
    ['BOOKING_MAX_PASSENGERS', '0', 'must be between 1 and 50, got 0'],
    ['DATABASE_POOL_SIZE', '201', 'must be between 1 and 200, got 201'],
  ])('keeps %s within its bounds', (variable, value, problem) => {
    expect(configErrorOf({ [variable]: value }).message).toBe(`configuration: ${variable} ${problem}`);
  });

  it('accepts the bounds themselves', () => {
    const config = loadConfig({
      ...minimalEnvironment,
      IDEMPOTENCY_KEY_RETENTION_HOURS: '24',
      HTTP_PORT: '65535',
    });
    expect(config.idempotency.retentionHours).toBe(24);
    expect(config.http.port).toBe(65535);
  });

  it.each([
    [
      'HTTP_TLS_KEY',
      { HTTP_TLS_CERT: '/run/tls/api.crt' },
      'is required when any of HTTP_TLS_CERT, HTTP_TLS_KEY is set',
    ],
    [
      'GRPC_TLS_CERT',
      { GRPC_TLS_CA: '/ca.crt', GRPC_TLS_KEY: '/server.key' },
      'is required when any of GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY is set',
    ],
    [
      'OIDC_JWKS_URL',
      { OIDC_JWKS_URL: 'https://issuer.example/jwks' },
      'needs OIDC_ISSUER: the embedded identity provider publishes its own keys',
    ],
    [
      'SMS_PROVIDER_URL',
      { NOTIFICATIONS_TRANSPORT: 'smtp+http' },
      'is required when NOTIFICATIONS_TRANSPORT is smtp+http',
    ],
  ])('applies the cross-field rule that names %s', (variable, override, problem) => {
    expect(configErrorOf(override).message).toBe(`configuration: ${variable} ${problem}`);
  });

  it('names the variable of a file that cannot be read where the file is used, at start', () => {
    const start = () =>
      createRestServer(new Koa(), {
        requestTimeoutMs: 1000,
        tls: { certificateFile: '/nonexistent/api.crt', keyFile: '/nonexistent/api.key' },
      });
    expect(start).toThrow(
      new ConfigError('HTTP_TLS_CERT', 'names a file that cannot be read (ENOENT): /nonexistent/api.crt'),
    );
  });

  it('never quotes a secret it refuses', () => {
    const error = configErrorOf({ DATABASE_URL: 'mysql://user:hunter2@db/bookings' });
    expect(error.message).not.toContain('hunter2');
  });

  it('gives every setting a description and a default in the reference', () => {
    for (const { settings } of schemaSections as readonly { settings: SettingTable }[]) {
      for (const [variable, setting] of Object.entries(settings)) {
        expect([variable, setting.description.length > 0, setting.defaultText.length > 0]).toEqual([
          variable,
          true,
          true,
        ]);
      }
    }
  });

  it('has docs/configuration.md carry the reference generated from the table (npm run docs:config)', () => {
    const current = fs.readFileSync(referenceFile, 'utf8');
    expect(current).toContain(configurationReference());
    expect(regeneratedReference(current)).toBe(current);
  });
});
