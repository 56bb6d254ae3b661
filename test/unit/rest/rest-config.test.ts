// The REST front's configuration variables: TLS files, proxy trust, rate limits and idempotency-key retention.
import { ConfigError, loadConfig } from '../../../src/config';
import { restSettingsFromConfig } from '../../../src/api/rest/app';

const required = {
  DATABASE_URL: 'postgres://user:secret@localhost:5432/bookings',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: Buffer.alloc(32, 2).toString('base64'),
};

function configError(environment: Record<string, string>): ConfigError {
  try {
    loadConfig({ ...required, ...environment });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('REST configuration', () => {
  it('defaults to plain HTTP, no proxy trust, per-minute limits and a day of idempotency keys', () => {
    const config = loadConfig(required);
    expect(config.http.tls).toBeUndefined();
    expect(config.http.trustProxy).toBe(false);
    expect(config.rateLimit).toEqual({ windowSeconds: 60, perUser: 300, perAddress: 1200 });
    expect(config.idempotency).toEqual({
      retentionHours: 24,
      inFlightLockSeconds: 120,
      purgeIntervalSeconds: 600,
    });
    expect(restSettingsFromConfig(config)).toMatchObject({
      bodyLimitBytes: 65536,
      requestTimeoutMs: 10000,
      trustProxy: false,
      rateLimits: config.rateLimit,
    });
  });

  it('reads TLS files, proxy trust and limits', () => {
    const config = loadConfig({
      ...required,
      HTTP_TLS_CERT: '/etc/tls/cert.pem',
      HTTP_TLS_KEY: '/etc/tls/key.pem',
      HTTP_TRUST_PROXY: 'true',
      RATE_LIMIT_WINDOW_SECONDS: '10',
      RATE_LIMIT_PER_USER: '0',
      RATE_LIMIT_PER_IP: '50',
      IDEMPOTENCY_KEY_RETENTION_HOURS: '48',
    });
    expect(config.http.tls).toEqual({ certificateFile: '/etc/tls/cert.pem', keyFile: '/etc/tls/key.pem' });
    expect(config.http.trustProxy).toBe(true);
    expect(config.rateLimit).toEqual({ windowSeconds: 10, perUser: 0, perAddress: 50 });
    expect(config.idempotency.retentionHours).toBe(48);
  });

  it('names the missing half of a TLS pair', () => {
    expect(configError({ HTTP_TLS_CERT: '/etc/tls/cert.pem' }).variable).toBe('HTTP_TLS_KEY');
    expect(configError({ HTTP_TLS_KEY: '/etc/tls/key.pem' }).variable).toBe('HTTP_TLS_CERT');
  });

  it('refuses to keep idempotency keys less than a day, and malformed limits', () => {
    expect(configError({ IDEMPOTENCY_KEY_RETENTION_HOURS: '12' }).variable).toBe(
      'IDEMPOTENCY_KEY_RETENTION_HOURS',
    );
    expect(configError({ RATE_LIMIT_PER_USER: 'lots' }).variable).toBe('RATE_LIMIT_PER_USER');
    expect(configError({ HTTP_TRUST_PROXY: 'maybe' }).variable).toBe('HTTP_TRUST_PROXY');
  });
});
