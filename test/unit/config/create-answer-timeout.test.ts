// A create must answer before the REST request timeout: BOOKING_CREATE_ANSWER_TIMEOUT_MS is bounded by it.
import { expect } from '@jest/globals';
import { loadConfig } from '../../../src/config';

const minimalEnvironment = {
  DATABASE_URL: 'postgres://user:password@127.0.0.1:5432/bookings',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: Buffer.alloc(32, 2).toString('base64'),
  GRPC_INSECURE: 'true',
};

describe('BOOKING_CREATE_ANSWER_TIMEOUT_MS', () => {
  it('defaults to four fifths of the request timeout, leaving the rest for the work around the wait', () => {
    expect(loadConfig(minimalEnvironment).booking.createAnswerTimeoutMs).toBe(8000);
    expect(
      loadConfig({ ...minimalEnvironment, HTTP_REQUEST_TIMEOUT_MS: '2000' }).booking.createAnswerTimeoutMs,
    ).toBe(1600);
  });

  it('takes a value below the request timeout', () => {
    const config = loadConfig({ ...minimalEnvironment, BOOKING_CREATE_ANSWER_TIMEOUT_MS: '9500' });
    expect(config.booking.createAnswerTimeoutMs).toBe(9500);
  });

  it.each(['10000', '12000'])(
    'refuses %s, not below the 10 s request timeout, naming the variable',
    (value) => {
      expect(() => loadConfig({ ...minimalEnvironment, BOOKING_CREATE_ANSWER_TIMEOUT_MS: value })).toThrow(
        expect.objectContaining({
          name: 'ConfigError',
          variable: 'BOOKING_CREATE_ANSWER_TIMEOUT_MS',
          message: expect.stringContaining('below HTTP_REQUEST_TIMEOUT_MS'),
        }),
      );
    },
  );
});
