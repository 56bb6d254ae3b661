// The Stripe adapter against localstripe (started once per run by global-setup): intents, 3-D Secure, refunds, webhooks.
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import {
  createStripePaymentGateway,
  stripeIdempotencyKey,
} from '../../../src/adapters/stripe-payment-gateway';
import { stripeWebhookEvent } from '../../../src/payments/stripe-webhooks';
import {
  GatewayTimeoutError,
  GatewayUnavailableError,
  IdempotencyKeyConflictError,
  PaymentNotFoundError,
  RefundRejectedError,
  type ChargeRequest,
  type PaymentGateway,
} from '../../../src/ports/payment-gateway';
import { localstripeKey } from '../../support/localstripe';
import { authenticateAtLocalstripe } from '../../../dev/stack/localstripe';
import { eventuallyFound } from '../../support/outcomes';

const localstripeUrl = process.env.LOCALSTRIPE_URL ?? '';
const run = randomUUID();
const euros = (amountMinor: number) => ({ amountMinor, currency: 'EUR' });
const threeDSecureCard = '4000002500003155';
const declinedOnChargeCard = '4000000000000341';

let gateway: PaymentGateway;
/** The test's own view of localstripe, for what a customer's client does: card details and 3-D Secure. */
let customerSide: Stripe;

function key(name: string): string {
  return `stripe-test-${run}:${name}`;
}

function request(name: string, overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  return {
    idempotencyKey: key(name),
    amount: euros(2590),
    paymentToken: 'pm_card_visa',
    description: 'Bus booking test',
    bookingId: `booking-${name}-${run}`,
    ...overrides,
  };
}

async function cardPaymentMethod(number: string): Promise<string> {
  const method = await customerSide.paymentMethods.create({
    type: 'card',
    card: { number, exp_month: 12, exp_year: 2034, cvc: '123' },
  });
  return method.id;
}

/** What Stripe.js does when the customer passes or fails the challenge. */
async function authenticate(intentId: string, clientSecret: string, success: boolean): Promise<void> {
  expect(await authenticateAtLocalstripe(localstripeUrl, { intentId, clientSecret, success })).toBe(200);
}

async function intentsWithKey(idempotencyKey: string): Promise<Stripe.PaymentIntent[]> {
  const all = await customerSide.paymentIntents.list({ limit: 100 }).autoPagingToArray({ limit: 10_000 });
  return all.filter((intent) => intent.metadata.idempotency_key === idempotencyKey);
}

async function threeDSecureChallenge(name: string) {
  const answer = await gateway.charge({
    ...request(name),
    paymentToken: await cardPaymentMethod(threeDSecureCard),
    allowAction: true,
  });
  if (answer.status !== 'requires_action') throw new Error(`expected requires_action, got ${answer.status}`);
  return answer;
}

async function approvedCharge(name: string, amountMinor = 2590): Promise<string> {
  const answer = await gateway.charge(request(name, { amount: euros(amountMinor) }));
  if (answer.status !== 'approved') throw new Error(`expected an approval, got ${answer.status}`);
  return answer.transactionId;
}

beforeAll(() => {
  if (!localstripeUrl)
    throw new Error('LOCALSTRIPE_URL is not set: the integration global setup starts localstripe');
  gateway = createStripePaymentGateway({ secretKey: localstripeKey, apiUrl: localstripeUrl });
  const { hostname, port, protocol } = new URL(localstripeUrl);
  customerSide = new Stripe(localstripeKey, {
    host: hostname,
    port: Number(port),
    protocol: protocol === 'http:' ? 'http' : 'https',
  });
});

describe('Stripe payment gateway on localstripe', () => {
  it('approves pm_card_visa at once, naming the booking and the key in the intent', async () => {
    const answer = await gateway.charge(request('visa'));
    expect(answer).toEqual({
      status: 'approved',
      transactionId: expect.stringMatching(/^pi_/) as unknown,
      methodMasked: 'visa •••• 4242',
    });
    const [intent] = await intentsWithKey(key('visa'));
    expect(intent.metadata).toMatchObject({
      booking_id: `booking-visa-${run}`,
      idempotency_key: key('visa'),
    });
    expect(intent).toMatchObject({ amount: 2590, currency: 'eur', status: 'succeeded' });
    if (answer.status !== 'approved') throw new Error('unreachable');
    await expect(gateway.paymentIntent(answer.transactionId)).resolves.toEqual(answer);
  });

  it('answers a 3-D Secure card with what the client needs, and approved once the challenge passes', async () => {
    const challenge = await threeDSecureChallenge('3ds-pass');
    expect(challenge).toEqual({
      status: 'requires_action',
      intentId: expect.stringMatching(/^pi_/) as unknown,
      clientSecret: expect.stringMatching(/^pi_.+_secret_/) as unknown,
      nextAction: { type: 'use_stripe_sdk' },
    });
    await expect(gateway.paymentIntent(challenge.intentId)).resolves.toEqual(challenge);

    await authenticate(challenge.intentId, challenge.clientSecret, true);

    await expect(gateway.paymentIntent(challenge.intentId)).resolves.toEqual({
      status: 'approved',
      transactionId: challenge.intentId,
      methodMasked: 'visa •••• 3155',
    });
  });

  it('declines a payment whose challenge failed', async () => {
    const challenge = await threeDSecureChallenge('3ds-fail');
    await authenticate(challenge.intentId, challenge.clientSecret, false);
    await expect(gateway.paymentIntent(challenge.intentId)).resolves.toEqual({
      status: 'declined',
      reason: 'payment_intent_authentication_failure',
    });
  });

  it('declines a challenge for a caller that did not opt in, cancelling the intent so it takes no money', async () => {
    const threeDSecure = await cardPaymentMethod(threeDSecureCard);
    const answer = await gateway.charge({ ...request('3ds-not-opted-in'), paymentToken: threeDSecure });
    expect(answer).toEqual({ status: 'declined', reason: 'authentication_required' });
    const [intent] = await intentsWithKey(key('3ds-not-opted-in'));
    expect(intent.status).toBe('canceled');
    await expect(
      gateway.charge({ ...request('3ds-not-opted-in'), paymentToken: threeDSecure }),
    ).resolves.toEqual(answer);
  });

  it('declines a card the issuer refuses, and answers the same on a retry of the key', async () => {
    const refused = await cardPaymentMethod(declinedOnChargeCard);
    const answer = await gateway.charge({ ...request('declined'), paymentToken: refused });
    expect(answer).toEqual({ status: 'declined', reason: 'card_declined' });
    await expect(gateway.charge({ ...request('declined'), paymentToken: refused })).resolves.toEqual(answer);
    await expect(intentsWithKey(key('declined'))).resolves.toHaveLength(1);
  });

  it('declines a payment method the account does not know as invalid_token', async () => {
    await expect(gateway.charge(request('unknown-method', { paymentToken: 'pm_nobody' }))).resolves.toEqual({
      status: 'declined',
      reason: 'invalid_token',
    });
  });

  it('declines a simulator token sent where a payment method belongs, instead of failing every retry', async () => {
    await expect(
      gateway.charge(request('simulator-token', { paymentToken: 'tok_visa' })),
    ).resolves.toMatchObject({
      status: 'declined',
    });
  });

  it('makes one intent for one key, answers a repeat the same, and refuses the key for another charge', async () => {
    const first = await gateway.charge(request('twice'));
    const second = await gateway.charge(request('twice'));
    expect(second).toEqual(first);
    await expect(intentsWithKey(key('twice'))).resolves.toHaveLength(1);
    await expect(gateway.charge(request('twice', { amount: euros(100) }))).rejects.toBeInstanceOf(
      IdempotencyKeyConflictError,
    );
  });

  it('tells what a key charged without charging: nothing before, the same outcome after', async () => {
    await expect(gateway.chargeMadeWith(key('made-with'))).resolves.toBeUndefined();
    await expect(intentsWithKey(key('made-with'))).resolves.toHaveLength(0);
    const charged = await gateway.charge(request('made-with'));
    await expect(gateway.chargeMadeWith(key('made-with'))).resolves.toEqual(charged);
    await expect(intentsWithKey(key('made-with'))).resolves.toHaveLength(1);
  });

  it('refunds part, then the rest, and refuses a refund beyond what is left', async () => {
    const transactionId = await approvedCharge('refunds', 5000);
    const partial = await gateway.refund({
      idempotencyKey: key('refund-1'),
      transactionId,
      amount: euros(2000),
    });
    expect(partial.refundId).toMatch(/^re_/);
    await expect(
      gateway.refund({ idempotencyKey: key('refund-1'), transactionId, amount: euros(2000) }),
    ).resolves.toEqual(partial);
    await expect(
      gateway.refund({ idempotencyKey: key('refund-1'), transactionId, amount: euros(1000) }),
    ).rejects.toBeInstanceOf(IdempotencyKeyConflictError);
    await expect(
      gateway.refund({ idempotencyKey: key('refund-too-much'), transactionId, amount: euros(3001) }),
    ).rejects.toBeInstanceOf(RefundRejectedError);

    const rest = await gateway.refund({
      idempotencyKey: key('refund-2'),
      transactionId,
      amount: euros(3000),
    });
    expect(rest.refundId).not.toBe(partial.refundId);
    const refunds = await customerSide.refunds.list({ payment_intent: transactionId });
    expect(refunds.data.map((refund) => refund.amount).sort()).toEqual([2000, 3000]);
    await expect(
      gateway.refund({ idempotencyKey: key('refund-3'), transactionId, amount: euros(1) }),
    ).rejects.toBeInstanceOf(RefundRejectedError);
  });

  it('refuses refunds of an unknown charge, one that did not succeed, and in another currency', async () => {
    await expect(
      gateway.refund({ idempotencyKey: key('refund-unknown'), transactionId: 'pi_nobody', amount: euros(1) }),
    ).rejects.toBeInstanceOf(RefundRejectedError);
    const challenge = await threeDSecureChallenge('refund-open');
    await expect(
      gateway.refund({
        idempotencyKey: key('refund-open'),
        transactionId: challenge.intentId,
        amount: euros(1),
      }),
    ).rejects.toBeInstanceOf(RefundRejectedError);
    const transactionId = await approvedCharge('refund-currency');
    await expect(
      gateway.refund({
        idempotencyKey: key('refund-currency'),
        transactionId,
        amount: { amountMinor: 1, currency: 'USD' },
      }),
    ).rejects.toBeInstanceOf(RefundRejectedError);
  });

  it('cancels an open intent, and answers approved for one the customer finished first (late money)', async () => {
    const open = await threeDSecureChallenge('cancel-open');
    await expect(gateway.cancelPayment(open.intentId, key('cancel-open'))).resolves.toEqual({
      status: 'canceled',
      intentId: open.intentId,
    });
    await expect(gateway.cancelPayment(open.intentId, key('cancel-open'))).resolves.toEqual({
      status: 'canceled',
      intentId: open.intentId,
    });

    const late = await threeDSecureChallenge('cancel-late');
    await authenticate(late.intentId, late.clientSecret, true);
    await expect(gateway.cancelPayment(late.intentId, key('cancel-late'))).resolves.toEqual({
      status: 'approved',
      transactionId: late.intentId,
      methodMasked: 'visa •••• 3155',
    });

    await expect(gateway.paymentIntent('pi_nobody')).rejects.toBeInstanceOf(PaymentNotFoundError);
    await expect(gateway.cancelPayment('pi_nobody', key('cancel-unknown'))).rejects.toBeInstanceOf(
      PaymentNotFoundError,
    );
  });

  it('sends every write with an Idempotency-Key of its own kind, derived from the request key', async () => {
    const seen: { method: string; path: string; key: string | undefined }[] = [];
    const target = new URL(localstripeUrl);
    // A loopback relay to localstripe that notes each request's method, path and key.
    const relay = http.createServer((incoming, answer) => {
      seen.push({
        method: incoming.method ?? '',
        path: (incoming.url ?? '').split('?')[0],
        key: incoming.headers['idempotency-key'] as string | undefined,
      });
      const forwarded = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.headers,
        },
        (response) => {
          answer.writeHead(response.statusCode ?? 502, response.headers);
          response.pipe(answer);
        },
      );
      incoming.pipe(forwarded);
    });
    relay.listen(0, '127.0.0.1');
    await once(relay, 'listening');
    try {
      const relayed = createStripePaymentGateway({
        secretKey: localstripeKey,
        apiUrl: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
      });
      const threeDSecure = await cardPaymentMethod(threeDSecureCard);
      await relayed.charge({ ...request('keys-challenge'), paymentToken: threeDSecure });
      const paid = await relayed.charge(request('keys-paid'));
      if (paid.status !== 'approved') throw new Error('expected an approval');
      await relayed.refund({
        idempotencyKey: key('keys-refund'),
        transactionId: paid.transactionId,
        amount: euros(10),
      });
      await relayed.cancelPayment(paid.transactionId, key('keys-cancel'));
    } finally {
      relay.closeAllConnections();
      relay.close();
    }
    const writes = seen.filter((call) => call.method === 'POST');
    expect(writes).toEqual([
      {
        method: 'POST',
        path: '/v1/payment_intents',
        key: stripeIdempotencyKey('create', key('keys-challenge')),
      },
      {
        method: 'POST',
        path: expect.stringMatching(/^\/v1\/payment_intents\/pi_\w+$/) as unknown,
        key: stripeIdempotencyKey('decline', key('keys-challenge')),
      },
      {
        method: 'POST',
        path: expect.stringMatching(/^\/v1\/payment_intents\/pi_\w+\/cancel$/) as unknown,
        key: stripeIdempotencyKey('cancel', key('keys-challenge')),
      },
      { method: 'POST', path: '/v1/payment_intents', key: stripeIdempotencyKey('create', key('keys-paid')) },
      { method: 'POST', path: '/v1/refunds', key: stripeIdempotencyKey('refund', key('keys-refund')) },
    ]);
    // Reads carry none: Stripe documents that a key on a GET has no effect.
    expect(seen.filter((call) => call.method !== 'POST').every((call) => call.method === 'GET')).toBe(true);
  });

  it('reports a processor that cannot be reached as unavailable, and one that never answers as a timeout', async () => {
    const silent = http.createServer(() => {});
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const silentPort = (silent.address() as AddressInfo).port;
    try {
      const slow = createStripePaymentGateway({
        secretKey: localstripeKey,
        apiUrl: `http://127.0.0.1:${silentPort}`,
        timeoutMs: 300,
        maxNetworkRetries: 0,
      });
      await expect(slow.charge(request('timeout'))).rejects.toBeInstanceOf(GatewayTimeoutError);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    // The port the silent server had, closed now: nothing listens there.
    const unreachable = createStripePaymentGateway({
      secretKey: localstripeKey,
      apiUrl: `http://127.0.0.1:${silentPort}`,
      maxNetworkRetries: 0,
    });
    const outcome = await unreachable.charge(request('unreachable')).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(GatewayUnavailableError);
    expect(outcome).not.toBeInstanceOf(GatewayTimeoutError);
  });

  it("delivers localstripe's signed payment_intent.succeeded to a loopback receiver, verified and mapped", async () => {
    const received: { body: Buffer; signature: string | undefined }[] = [];
    const receiver = http.createServer((incoming, answer) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        received.push({
          body: Buffer.concat(chunks),
          signature: incoming.headers['stripe-signature'] as string,
        });
        answer.writeHead(200).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/stripe`;
    const secret = `whsec_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`;
    const endpointId = `test-${run}`;
    try {
      const registered = await fetch(`${localstripeUrl}/_config/webhooks/${endpointId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ url: receiverUrl, secret }),
        signal: AbortSignal.timeout(5000),
      });
      expect(registered.status).toBe(200);

      const challenge = await threeDSecureChallenge('webhook');
      await authenticate(challenge.intentId, challenge.clientSecret, true);

      const delivery = await eventuallyFound(
        () => received.find((candidate) => candidate.body.toString('utf8').includes(challenge.intentId)),
        10_000,
      );
      const event = stripeWebhookEvent(delivery.body, delivery.signature, secret);
      expect(event).toEqual({
        kind: 'intent_succeeded',
        eventId: expect.stringMatching(/^evt_/) as unknown,
        type: 'payment_intent.succeeded',
        createdAt: expect.any(Number) as unknown,
        bookingId: `booking-webhook-${run}`,
        intentId: challenge.intentId,
        amount: euros(2590),
      });
      expect(() => stripeWebhookEvent(delivery.body, delivery.signature, `${secret}x`)).toThrow(
        'No signatures found matching the expected signature',
      );
    } finally {
      // localstripe keeps the endpoint for the rest of the run: pointed at a port nobody holds, it posts nowhere.
      await fetch(`${localstripeUrl}/_config/webhooks/${endpointId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ url: 'http://127.0.0.1:9/closed', secret }),
        signal: AbortSignal.timeout(5000),
      }).catch(() => undefined);
      receiver.closeAllConnections();
      receiver.close();
    }
  });
});
