// PAYMENT_GATEWAY and the Stripe variables: the simulator by default, Stripe only with a well-formed key.
import { expect } from '@jest/globals';
import { loadConfig } from '../../../src/config';

const minimalEnvironment = {
  DATABASE_URL: 'postgres://user:password@127.0.0.1:5432/bookings',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: Buffer.alloc(32, 2).toString('base64'),
  GRPC_INSECURE: 'true',
};
const webhookSecret = 'whsec_abc123';
const stripe = { ...minimalEnvironment, PAYMENT_GATEWAY: 'stripe', STRIPE_WEBHOOK_SECRET: webhookSecret };
const testKey = 'sk_test_51Hexample0123456789';

function refusal(environment: Record<string, string>, variable: string, problem: string) {
  return () =>
    expect(() => loadConfig(environment)).toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        variable,
        message: expect.stringContaining(problem) as unknown,
      }),
    );
}

describe('payment configuration', () => {
  it('uses the simulator unless told otherwise, whatever Stripe variables are set', () => {
    expect(loadConfig(minimalEnvironment).payments).toEqual({ gateway: 'simulator' });
    expect(loadConfig({ ...minimalEnvironment, STRIPE_SECRET_KEY: 'nonsense' }).payments).toEqual({
      gateway: 'simulator',
    });
  });

  it('uses Stripe with a test or live key, and a test server only with a test key', () => {
    expect(loadConfig({ ...stripe, STRIPE_SECRET_KEY: testKey }).payments).toEqual({
      gateway: 'stripe',
      stripe: { secretKey: testKey, webhookSecret },
    });
    expect(
      loadConfig({
        ...stripe,
        STRIPE_SECRET_KEY: testKey,
        STRIPE_API_URL: 'http://127.0.0.1:8420',
      }).payments,
    ).toEqual({
      gateway: 'stripe',
      stripe: { secretKey: testKey, apiUrl: 'http://127.0.0.1:8420', webhookSecret: 'whsec_abc123' },
    });
    expect(loadConfig({ ...stripe, STRIPE_SECRET_KEY: 'sk_live_51Hexample' }).payments).toMatchObject({
      gateway: 'stripe',
    });
  });

  it(
    'refuses Stripe without a key',
    refusal(stripe, 'STRIPE_SECRET_KEY', 'is required when PAYMENT_GATEWAY is stripe'),
  );

  it(
    'refuses Stripe without the webhook signing secret, so no outcome the processor tells later is lost',
    refusal(
      { ...minimalEnvironment, PAYMENT_GATEWAY: 'stripe', STRIPE_SECRET_KEY: testKey },
      'STRIPE_WEBHOOK_SECRET',
      'is required when PAYMENT_GATEWAY is stripe',
    ),
  );

  it(
    'refuses a gateway it does not know',
    refusal({ ...minimalEnvironment, PAYMENT_GATEWAY: 'adyen' }, 'PAYMENT_GATEWAY', 'must be one of'),
  );

  it.each(['pk_test_51Hexample', 'rk_live_51Hexample', 'sk_test_', 'sk_other_51Hexample'])(
    'refuses %s as a secret key without quoting it',
    (key) => {
      let message = '';
      try {
        loadConfig({ ...stripe, STRIPE_SECRET_KEY: key });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe(
        'configuration: STRIPE_SECRET_KEY must be a Stripe secret key, sk_test_… or sk_live_…',
      );
    },
  );

  it(
    'refuses a live key beside another API, which would send it to a server that is not Stripe',
    refusal(
      { ...stripe, STRIPE_SECRET_KEY: 'sk_live_51Hexample', STRIPE_API_URL: 'http://127.0.0.1:8420' },
      'STRIPE_API_URL',
      'takes an sk_test_ key only',
    ),
  );

  it(
    'refuses a webhook secret that is not one, without quoting it',
    refusal({ ...minimalEnvironment, STRIPE_WEBHOOK_SECRET: 'hunter2' }, 'STRIPE_WEBHOOK_SECRET', 'whsec_'),
  );

  it('reconciles every 5 minutes by default, looking back over the hold and two intervals', () => {
    expect(loadConfig(minimalEnvironment).paymentReconciliation).toEqual({
      intervalMinutes: 5,
      lookbackSeconds: 15 * 60 + 2 * 5 * 60,
    });
    expect(
      loadConfig({
        ...minimalEnvironment,
        PAYMENT_RECONCILE_INTERVAL_MINUTES: '30',
        BOOKING_HOLD_SECONDS: '600',
      }).paymentReconciliation,
    ).toEqual({ intervalMinutes: 30, lookbackSeconds: 600 + 2 * 30 * 60 });
  });

  it(
    'refuses a reconciliation interval over an hour',
    refusal(
      { ...minimalEnvironment, PAYMENT_RECONCILE_INTERVAL_MINUTES: '61' },
      'PAYMENT_RECONCILE_INTERVAL_MINUTES',
      '',
    ),
  );
});
