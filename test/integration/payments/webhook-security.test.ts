// The Stripe webhook endpoint over HTTP: forged, stale, replayed, duplicate, out of order, unknown; localstripe's own.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createStripePaymentGateway } from '../../../src/adapters/stripe-payment-gateway';
import { readPaymentEvent } from '../../../src/db/payment-events';
import { localstripeKey } from '../../support/localstripe';
import {
  intentObject,
  paymentEventSignals,
  stripeEventBody,
  stripeSignature,
  webhookSecret,
} from '../../support/payment-events';
import { composeTestApi, startServer, type RunningServer, type TestApi } from '../../support/rest-app';
import type { Actor } from '../../../src/domain/actor';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';
import { eventuallyFound } from '../../support/outcomes';

jest.setTimeout(60_000);

const localstripeUrl = process.env.LOCALSTRIPE_URL ?? '';
const secret = webhookSecret();
const testBed = {} as { saga: SagaEnvironment; trip: TestTrip; customer: Actor };
let api: TestApi;
let server: RunningServer;

beforeAll(async () => {
  if (!localstripeUrl) throw new Error('LOCALSTRIPE_URL is not set: the integration global setup starts it');
  testBed.saga = await startSagaEnvironment({
    environment: {
      BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100',
      PAYMENT_GATEWAY: 'stripe',
      STRIPE_SECRET_KEY: localstripeKey,
      STRIPE_API_URL: localstripeUrl,
      STRIPE_WEBHOOK_SECRET: secret,
    },
  });
  testBed.trip = await createTrip(testBed.saga.database, { seatCount: 40 });
  testBed.customer = await createCustomer(testBed.saga.database, testBed.saga.cipher);
  api = await composeTestApi(testBed.saga);
  server = await startServer(api.app);
});

afterAll(async () => {
  await server?.close();
  await api?.remove();
  await testBed.saga?.stop();
});

interface Delivery {
  status: number;
  body: Record<string, unknown>;
}

async function deliver(body: string, signature: string | undefined): Promise<Delivery> {
  const response = await fetch(`${server.baseUrl}/v1/payments/stripe/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...(signature === undefined ? {} : { 'stripe-signature': signature }),
    },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function signed(body: string, timestamp?: number): Promise<Delivery> {
  return deliver(body, stripeSignature(body, secret, timestamp));
}

let seatsTaken = 0;
/** A booking of its own seat, PENDING_PAYMENT, its workflow running. */
async function pendingBooking(): Promise<string> {
  const seat = `${Math.floor(seatsTaken / 4) + 1}${'ABCD'[seatsTaken % 4]}`;
  seatsTaken += 1;
  const booking = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, [seat]),
  );
  return booking.id;
}

async function eventsCounted(labels: Record<string, string>): Promise<number> {
  const metric = await api.metrics.registry.getSingleMetric('bus_booking_payment_events_total')!.get();
  return metric.values
    .filter((value) => Object.entries(labels).every(([name, wanted]) => value.labels[name] === wanted))
    .reduce((sum, value) => sum + value.value, 0);
}

async function refusalsCounted(): Promise<number> {
  const metric = await api.metrics.registry
    .getSingleMetric('bus_booking_payment_webhook_refusals_total')!
    .get();
  return metric.values.reduce((sum, value) => sum + value.value, 0);
}

function expectSignatureRefused(delivery: Delivery, message: string): void {
  expect(delivery.status).toBe(400);
  expect(delivery.body).toMatchObject({
    code: 'VALIDATION_FAILED',
    errors: [{ field: 'Stripe-Signature', message: expect.stringContaining(message) as unknown }],
  });
}

describe('the Stripe webhook endpoint refuses what it cannot verify, and records and applies nothing then', () => {
  it.each([
    [
      'a signature made with another secret',
      (body: string) => stripeSignature(body, webhookSecret()),
      'does not match',
    ],
    [
      'a forged v1 (the right timestamp, a made-up HMAC)',
      () => `t=${Math.floor(Date.now() / 1000)},v1=${'ab'.repeat(32)}`,
      'does not match',
    ],
    ['no signature at all', () => undefined, 'required'],
    [
      'a signature older than the 300 s tolerance (a replay of a captured delivery)',
      (body: string) => stripeSignature(body, secret, Math.floor(Date.now() / 1000) - 301),
      'older than the 300 s tolerance',
    ],
  ])('%s: 400 naming Stripe-Signature', async (_name, signatureOf, message) => {
    const bookingId = await pendingBooking();
    const eventId = `evt_refused_${randomUUID().replace(/-/g, '')}`;
    const body = stripeEventBody({
      id: eventId,
      type: 'payment_intent.succeeded',
      object: intentObject(`pi_refused_${randomUUID().replace(/-/g, '')}`, bookingId),
    });
    const refusedBefore = await refusalsCounted();

    expectSignatureRefused(await deliver(body, signatureOf(body)), message);

    expect(await readPaymentEvent(testBed.saga.database, eventId)).toBeUndefined();
    expect(await paymentEventSignals(testBed.saga.client, bookingId)).toEqual([]);
    expect(await refusalsCounted()).toBe(refusedBefore + 1);
  });

  it('a body altered after signing: 400, nothing recorded', async () => {
    const bookingId = await pendingBooking();
    const eventId = `evt_altered_${randomUUID().replace(/-/g, '')}`;
    const body = stripeEventBody({
      id: eventId,
      type: 'payment_intent.succeeded',
      object: intentObject('pi_altered', bookingId),
    });
    const signature = stripeSignature(body, secret);

    expectSignatureRefused(await deliver(body.replace('2500', '1'), signature), 'does not match');
    expect(await readPaymentEvent(testBed.saga.database, eventId)).toBeUndefined();
    expect(await paymentEventSignals(testBed.saga.client, bookingId)).toEqual([]);
  });

  it('a body over the documented 256 KiB: 413 before the signature is even looked at', async () => {
    const body = stripeEventBody({
      type: 'payment_intent.succeeded',
      object: intentObject('pi_large', undefined, { description: 'x'.repeat(262_144) }),
    });
    const delivery = await signed(body);
    expect(delivery.status).toBe(413);
    expect(delivery.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('a verified event is recorded once by its id and applied once', () => {
  it('replayed as it was (same body, same signature, within the tolerance): 200 both times, applied once', async () => {
    const bookingId = await pendingBooking();
    const intentId = `pi_replay_${randomUUID().replace(/-/g, '')}`;
    const eventId = `evt_replay_${randomUUID().replace(/-/g, '')}`;
    const body = stripeEventBody({
      id: eventId,
      type: 'payment_intent.succeeded',
      object: intentObject(intentId, bookingId),
    });
    const signature = stripeSignature(body, secret);

    const first = await deliver(body, signature);
    const replayed = await deliver(body, signature);

    expect(first).toEqual({ status: 200, body: { event_id: eventId, outcome: 'applied' } });
    expect(replayed).toEqual({ status: 200, body: { event_id: eventId, outcome: 'duplicate' } });
    const signals = await paymentEventSignals(testBed.saga.client, bookingId);
    expect(signals).toEqual([
      expect.objectContaining({ eventId, kind: 'intent_succeeded', intentId, bookingId }),
    ]);
    expect(await readPaymentEvent(testBed.saga.database, eventId)).toMatchObject({
      source: 'webhook',
      kind: 'intent_succeeded',
      deliveries: 2,
      outcome: 'applied',
      appliedAt: expect.any(Date) as unknown,
    });
  });

  it("Stripe's retry of one event (signed anew), and two deliveries at the same moment: applied once", async () => {
    const bookingId = await pendingBooking();
    const eventId = `evt_duplicate_${randomUUID().replace(/-/g, '')}`;
    const body = stripeEventBody({
      id: eventId,
      type: 'payment_intent.payment_failed',
      object: intentObject(`pi_duplicate_${randomUUID().replace(/-/g, '')}`, bookingId, {
        status: 'requires_payment_method',
        last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds' },
      }),
    });
    const duplicatesBefore = await eventsCounted({ source: 'webhook', outcome: 'duplicate' });

    const together = await Promise.all([signed(body), signed(body)]);
    const retried = await signed(body, Math.floor(Date.now() / 1000) + 1);

    expect(together.map((delivery) => delivery.status)).toEqual([200, 200]);
    expect(together.map((delivery) => delivery.body.outcome).sort()).toEqual(['applied', 'duplicate']);
    expect(retried).toEqual({ status: 200, body: { event_id: eventId, outcome: 'duplicate' } });
    const signals = await paymentEventSignals(testBed.saga.client, bookingId);
    expect(signals).toEqual([
      expect.objectContaining({ eventId, kind: 'intent_failed', reason: 'insufficient_funds' }),
    ]);
    expect(await readPaymentEvent(testBed.saga.database, eventId)).toMatchObject({ deliveries: 3 });
    expect(await eventsCounted({ source: 'webhook', outcome: 'duplicate' })).toBe(duplicatesBefore + 2);
  });

  it('out of order (the later event first): both recorded and both sent, as delivered', async () => {
    const bookingId = await pendingBooking();
    const intentId = `pi_order_${randomUUID().replace(/-/g, '')}`;
    const now = Math.floor(Date.now() / 1000);
    const earlier = stripeEventBody({
      type: 'payment_intent.requires_action',
      created: now - 30,
      object: intentObject(intentId, bookingId, { status: 'requires_action' }),
    });
    const later = stripeEventBody({
      type: 'payment_intent.succeeded',
      created: now,
      object: intentObject(intentId, bookingId),
    });

    const first = await signed(later);
    const second = await signed(earlier);

    expect([first.body.outcome, second.body.outcome]).toEqual(['applied', 'applied']);
    const signals = await paymentEventSignals(testBed.saga.client, bookingId);
    expect(signals.map((signal) => [signal.kind, signal.createdAt])).toEqual([
      ['intent_succeeded', now],
      ['intent_requires_action', now - 30],
    ]);
  });

  it('a redelivery of an event recorded but never applied (the process died in between) applies it then', async () => {
    const bookingId = await pendingBooking();
    const eventId = `evt_unapplied_${randomUUID().replace(/-/g, '')}`;
    const body = stripeEventBody({
      id: eventId,
      type: 'charge.dispute.created',
      object: {
        id: 'dp_unapplied',
        object: 'dispute',
        amount: 2500,
        currency: 'eur',
        payment_intent: 'pi_unapplied',
        reason: 'fraudulent',
        metadata: { booking_id: bookingId },
      },
    });
    // As the first delivery left it: recorded, then nothing.
    await testBed.saga.database('payment_events').insert({
      event_id: eventId,
      source: 'webhook',
      type: 'charge.dispute.created',
      kind: 'dispute_created',
      booking_id: bookingId,
      intent_id: 'pi_unapplied',
      event: JSON.stringify({ eventId }),
      created_at: new Date(),
      claimed_until: new Date(Date.now() - 1000),
    });

    expect((await signed(body)).body).toEqual({ event_id: eventId, outcome: 'applied' });
    expect((await signed(body)).body).toEqual({ event_id: eventId, outcome: 'duplicate' });
    expect(await paymentEventSignals(testBed.saga.client, bookingId)).toEqual([
      expect.objectContaining({ eventId, kind: 'dispute_created', disputeId: 'dp_unapplied' }),
    ]);
    expect(await readPaymentEvent(testBed.saga.database, eventId)).toMatchObject({
      deliveries: 3,
      outcome: 'applied',
    });
  });
});

describe('verified events that change nothing are answered 200, so Stripe stops retrying, and counted', () => {
  it('an event type nobody acts on: recorded as ignored, nothing sent', async () => {
    const bookingId = await pendingBooking();
    const eventId = `evt_unknown_${randomUUID().replace(/-/g, '')}`;
    const ignoredBefore = await eventsCounted({ kind: 'ignored', outcome: 'ignored' });

    const delivery = await signed(
      stripeEventBody({
        id: eventId,
        type: 'customer.created',
        object: { id: 'cus_1', object: 'customer', metadata: { booking_id: bookingId } },
      }),
    );

    expect(delivery).toEqual({ status: 200, body: { event_id: eventId, outcome: 'ignored' } });
    expect(await readPaymentEvent(testBed.saga.database, eventId)).toMatchObject({
      kind: 'ignored',
      outcome: 'ignored',
    });
    expect(await paymentEventSignals(testBed.saga.client, bookingId)).toEqual([]);
    expect(await eventsCounted({ kind: 'ignored', outcome: 'ignored' })).toBe(ignoredBefore + 1);
  });

  it('an intent naming no booking, and one naming a booking nobody has: recorded and counted', async () => {
    const noBooking = `evt_nobooking_${randomUUID().replace(/-/g, '')}`;
    const unknownBooking = `evt_nobody_${randomUUID().replace(/-/g, '')}`;
    const before = {
      noBooking: await eventsCounted({ source: 'webhook', outcome: 'no_booking' }),
      noWorkflow: await eventsCounted({ source: 'webhook', outcome: 'no_workflow' }),
    };

    const unnamed = await signed(
      stripeEventBody({
        id: noBooking,
        type: 'payment_intent.succeeded',
        object: intentObject('pi_nobody_knows', undefined),
      }),
    );
    const unknown = await signed(
      stripeEventBody({
        id: unknownBooking,
        type: 'payment_intent.succeeded',
        object: intentObject('pi_nobody_knows_either', randomUUID()),
      }),
    );

    expect(unnamed).toEqual({ status: 200, body: { event_id: noBooking, outcome: 'no_booking' } });
    expect(unknown).toEqual({ status: 200, body: { event_id: unknownBooking, outcome: 'no_workflow' } });
    expect(await readPaymentEvent(testBed.saga.database, unknownBooking)).toMatchObject({
      outcome: 'no_workflow',
      appliedAt: expect.any(Date) as unknown,
    });
    expect(await eventsCounted({ source: 'webhook', outcome: 'no_booking' })).toBe(before.noBooking + 1);
    expect(await eventsCounted({ source: 'webhook', outcome: 'no_workflow' })).toBe(before.noWorkflow + 1);
  });
});

/**
 * Passes on to the endpoint, bytes and signature unchanged, the deliveries that name `bookingId`, and answers the
 * others itself: localstripe posts every event to every registered endpoint, and other test files charge too.
 */
async function relayFor(bookingId: string): Promise<{ url: string; close(): void }> {
  const relay = http.createServer((incoming, answer) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      if (!body.toString('utf8').includes(bookingId)) {
        answer.writeHead(200).end();
        return;
      }
      fetch(`${server.baseUrl}/v1/payments/stripe/events`, {
        method: 'POST',
        headers: {
          'content-type': String(incoming.headers['content-type'] ?? 'application/json'),
          'stripe-signature': String(incoming.headers['stripe-signature'] ?? ''),
        },
        body,
      }).then(
        (response) => answer.writeHead(response.status).end(),
        () => answer.writeHead(502).end(),
      );
    });
  });
  relay.listen(0, '127.0.0.1');
  await once(relay, 'listening');
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/webhooks/stripe`,
    close: () => {
      relay.closeAllConnections();
      relay.close();
    },
  };
}

describe("localstripe's own webhook", () => {
  it('reaches the endpoint signed, is recorded and sent to the booking paid by card', async () => {
    const bookingId = await pendingBooking();
    const endpointId = `webhook-security-${randomUUID()}`;
    const register = (url: string) =>
      fetch(`${localstripeUrl}/_config/webhooks/${endpointId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ url, secret }),
        signal: AbortSignal.timeout(5000),
      });
    const relay = await relayFor(bookingId);
    expect((await register(relay.url)).status).toBe(200);
    try {
      const gateway = createStripePaymentGateway({ secretKey: localstripeKey, apiUrl: localstripeUrl });
      const answer = await gateway.charge({
        idempotencyKey: `${bookingId}:webhook-security:1`,
        amount: { amountMinor: 2500, currency: 'EUR' },
        paymentToken: 'pm_card_visa',
        description: 'Bus booking webhook test',
        bookingId,
      });
      if (answer.status !== 'approved') throw new Error(`expected an approval, got ${answer.status}`);

      const signal = await eventuallyFound(async () => {
        const signals = await paymentEventSignals(testBed.saga.client, bookingId);
        // Stripe's own event, not what a reconciliation pass of another file may have found first.
        return signals.find(
          (candidate) => candidate.kind === 'intent_succeeded' && candidate.eventId.startsWith('evt_'),
        );
      }, 15_000);

      expect(signal).toMatchObject({
        eventId: expect.stringMatching(/^evt_/) as unknown,
        type: 'payment_intent.succeeded',
        intentId: answer.transactionId,
        bookingId,
        amount: { amountMinor: 2500, currency: 'EUR' },
      });
      expect(await readPaymentEvent(testBed.saga.database, signal.eventId)).toMatchObject({
        source: 'webhook',
        bookingId,
        outcome: 'applied',
      });
    } finally {
      // localstripe keeps endpoints for the run: pointed at a closed port, it posts nowhere.
      await register('http://127.0.0.1:9/closed').catch(() => undefined);
      relay.close();
    }
  });
});
