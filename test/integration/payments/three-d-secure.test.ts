// The 3-D Secure payment over REST and gRPC against localstripe, its outcome brought by localstripe's own webhook.
import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import Stripe from 'stripe';
import type { BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import { registerLocalstripeWebhook } from '../../../dev/stack/localstripe';
import { readPaymentEvent } from '../../../src/db/payment-events';
import {
  BookingStatus,
  PaymentActionStatus,
  PaymentStatus,
} from '../../../src/generated/com/example/bookings/v1/booking';
import { activeSeatsOf } from '../../support/booking-records';
import {
  clientFor,
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';
import {
  localstripeBinary,
  localstripeKey,
  startLocalstripe,
  type RunningLocalstripe,
} from '../../support/localstripe';
import { eventually } from '../../support/outcomes';
import {
  paymentEventSignals,
  stripeEventBody,
  stripeSignature,
  webhookSecret,
} from '../../support/payment-events';
import { composeTestApi, startServer, type RunningServer, type TestApi } from '../../support/rest-app';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import { actorOf, insertLoginUser } from '../../support/users';
import { authenticateAtLocalstripe } from '../../../dev/stack/localstripe';

// The saga's workers (a webpack bundle), Temporal and localstripe's Python server are all in the path.
jest.setTimeout(120_000);

const threeDSecureCard = '4000002500003155';
/** localstripe posts an event about a second after the change; this leaves room for a loaded machine. */
const outcomeWithinMs = 20_000;

/**
 * A localstripe of this file's own: it posts every event to every endpoint registered with it, so on the run's shared
 * one this API would receive (and apply, through the shared Temporal namespace and database) the charges of other
 * files, such as the lost webhooks the reconciliation test counts on, and theirs would receive ours.
 */
let localstripe: RunningLocalstripe;
const secret = webhookSecret();
let saga: SagaEnvironment;
let api: TestApi;
let server: RunningServer;
let trip: TestTrip;
let restToken: string;
let certificates: TestCertificates;
let grpcServer: RunningGrpcServer;
let grpc: BookingClient;
/** The customer's side of localstripe: what Stripe.js does in the browser. */
let customerSide: Stripe;
let nextSeat = 0;

beforeAll(async () => {
  localstripe = await startLocalstripe(localstripeBinary());
  saga = await startSagaEnvironment({
    environment: {
      BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100',
      PAYMENT_GATEWAY: 'stripe',
      STRIPE_API_URL: localstripe.url,
      STRIPE_SECRET_KEY: localstripeKey,
      STRIPE_WEBHOOK_SECRET: secret,
    },
  });
  api = await composeTestApi(saga);
  server = await startServer(api.app);
  // As an operator registers the endpoint in Stripe's dashboard: the API's own events endpoint, its signing secret.
  await registerLocalstripeWebhook(localstripe.url, {
    id: 'three-d-secure',
    url: `${server.baseUrl}/v1/payments/stripe/events`,
    secret,
  });

  trip = await createTrip(saga.database, { seatCount: 16 });
  const customer = await insertLoginUser(saga.database, saga.cipher, { roles: ['customer'] });
  restToken = (await api.identityProvider.login(customer, '127.0.0.1')).access_token;
  certificates = createTestCertificates();
  grpcServer = await startTestServer({
    certificates,
    application: saga.application,
    verifyAccessToken: () => Promise.resolve(actorOf(customer)),
  });
  grpc = clientFor(grpcServer, certificates);
  const { hostname, port } = new URL(localstripe.url);
  customerSide = new Stripe(localstripeKey, { host: hostname, port: Number(port), protocol: 'http' });
});

afterAll(async () => {
  grpc?.close();
  await grpcServer?.stop();
  await localstripe?.stop();
  await server?.close();
  await api?.remove();
  await saga?.stop();
  if (certificates) removeTestCertificates(certificates);
});

function freshSeat(): string {
  const seat = trip.seatNumbers[nextSeat];
  nextSeat += 1;
  return seat;
}

/** A card that asks for 3-D Secure, as Stripe.js creates it from the customer's card details. */
async function challengedCard(): Promise<string> {
  const method = await customerSide.paymentMethods.create({
    type: 'card',
    card: { number: threeDSecureCard, exp_month: 12, exp_year: 2034, cvc: '123' },
  });
  return method.id;
}

/** The customer passes or fails the challenge: Stripe.js's part, with the client secret the payment answered. */
async function authenticate(intentId: string, clientSecret: string, success: boolean): Promise<void> {
  expect(await authenticateAtLocalstripe(localstripe.url, { intentId, clientSecret, success })).toBe(200);
}

/**
 * The customer fails the challenge, and the processor says so by webhook. localstripe marks the intent failed but
 * sends no event for a failed challenge (it sends `payment_intent.payment_failed` only for a charge that fails), so
 * the event Stripe sends then is posted here to the same endpoint: the intent as localstripe now holds it, signed
 * with the endpoint's secret by the SDK, as Stripe signs it.
 */
async function failChallenge(intentId: string, clientSecret: string): Promise<void> {
  await authenticate(intentId, clientSecret, false);
  const intent = await customerSide.paymentIntents.retrieve(intentId);
  expect(intent.status).toBe('requires_payment_method');
  const body = stripeEventBody({ type: 'payment_intent.payment_failed', object: { ...intent } });
  const response = await fetch(`${server.baseUrl}/v1/payments/stripe/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, secret) },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ outcome: 'applied' });
}

/**
 * The processor's event about the intent that the booking's workflow received, and how the endpoint recorded it:
 * an `evt_…` the webhook endpoint received once, never one a reconciliation pass made.
 */
async function webhookEventFor(bookingId: string, intentId: string, type: string) {
  const signal = (await paymentEventSignals(saga.client, bookingId)).find(
    (candidate) => 'intentId' in candidate && candidate.intentId === intentId && candidate.type === type,
  );
  expect(signal).toMatchObject({ eventId: expect.stringMatching(/^evt_/) as unknown, bookingId });
  const recorded = await readPaymentEvent(saga.database, signal!.eventId);
  expect(recorded).toMatchObject({ source: 'webhook', bookingId, outcome: 'applied', deliveries: 1 });
  return { eventId: signal!.eventId, type, kind: recorded!.kind, outcome: recorded!.outcome };
}

interface RestAnswer {
  status: number;
  body: Record<string, unknown>;
}

const rest = {
  async call(method: 'GET' | 'POST', path: string, body?: object): Promise<RestAnswer> {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${restToken}`,
        'idempotency-key': randomUUID(),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  },
  async create(): Promise<{ id: string; price: { total: { amount_minor: number; currency: string } } }> {
    const response = await rest.call('POST', '/v1/bookings', {
      trip_id: trip.tripId,
      passengers: [
        {
          first_name: 'Ana',
          last_name: 'Silva',
          email: 'ana@example.com',
          seat_number: freshSeat(),
          fare_class: 'STANDARD',
        },
      ],
      contact_email: 'ana@example.com',
    });
    expect(response.status).toBe(201);
    return response.body as { id: string; price: { total: { amount_minor: number; currency: string } } };
  },
  async booking(
    id: string,
  ): Promise<Record<string, unknown> & { status: string; payment: { status: string } }> {
    const response = await rest.call('GET', `/v1/bookings/${id}`);
    expect(response.status).toBe(200);
    return response.body as Record<string, unknown> & { status: string; payment: { status: string } };
  },
};

describe('REST: POST /v1/bookings/{id}/payment with a card that asks for 3-D Secure', () => {
  it('answers the challenge with what the client needs; passed, the webhook brings the outcome, the booking is CONFIRMED', async () => {
    const created = await rest.create();

    const payment = await rest.call('POST', `/v1/bookings/${created.id}/payment`, {
      payment_method: await challengedCard(),
    });

    expect(payment.status).toBe(200);
    expect(payment.body).toMatchObject({
      status: 'PENDING_PAYMENT',
      payment: {
        status: 'NONE',
        action: {
          status: 'REQUIRES_ACTION',
          intent_id: expect.stringMatching(/^pi_/),
          client_secret: expect.stringMatching(/^pi_.+_secret_/),
          next_action: { type: 'use_stripe_sdk', redirect_url: null },
        },
      },
    });
    const { intent_id: intentId, client_secret: clientSecret } = (
      payment.body as { payment: { action: { intent_id: string; client_secret: string } } }
    ).payment.action;
    process.stdout.write(
      `REST payment answer: ${JSON.stringify((payment.body as { payment: unknown }).payment)}\n`,
    );
    // Reading the booking shows the open payment, never its secret.
    expect((await rest.booking(created.id)).payment).toMatchObject({
      status: 'NONE',
      action: { status: 'REQUIRES_ACTION', intent_id: intentId, client_secret: null },
    });

    await authenticate(intentId, clientSecret, true);

    const confirmed = await eventually(
      () => rest.booking(created.id),
      (booking) => booking.status === 'CONFIRMED',
      { timeoutMs: outcomeWithinMs },
    );
    expect(confirmed).toMatchObject({
      status: 'CONFIRMED',
      payment: { status: 'CAPTURED', method: expect.stringContaining('3155') },
      amount_paid: created.price.total,
    });
    expect(confirmed.payment).toMatchObject({ action: null });
    expect(await activeSeatsOf(saga.database, created.id)).toEqual([expect.stringMatching(/:BOOKED$/)]);
    const event = await webhookEventFor(created.id, intentId, 'payment_intent.succeeded');
    process.stdout.write(`REST webhook received: ${JSON.stringify(event)}\n`);
    process.stdout.write(`REST after the event: ${confirmed.status} ${JSON.stringify(confirmed.payment)}\n`);
  });

  it('a failed challenge is a declined attempt with the seats still held; a second attempt pays', async () => {
    const created = await rest.create();
    const payment = await rest.call('POST', `/v1/bookings/${created.id}/payment`, {
      payment_method: await challengedCard(),
    });
    const { intent_id: intentId, client_secret: clientSecret } = (
      payment.body as { payment: { action: { intent_id: string; client_secret: string } } }
    ).payment.action;

    await failChallenge(intentId, clientSecret);
    const declined = await eventually(
      () => rest.booking(created.id),
      (booking) => booking.payment.status === 'DECLINED',
      { timeoutMs: outcomeWithinMs },
    );
    const event = await webhookEventFor(created.id, intentId, 'payment_intent.payment_failed');

    expect(declined).toMatchObject({
      status: 'PENDING_PAYMENT',
      payment: { status: 'DECLINED', decline_reason: 'payment_intent_authentication_failure' },
    });
    expect(declined.payment).toMatchObject({ action: null });
    const held = await activeSeatsOf(saga.database, created.id);
    expect(held).toEqual([expect.stringMatching(/:HELD$/)]);

    const second = await rest.call('POST', `/v1/bookings/${created.id}/payment`, {
      payment_method: 'pm_card_visa',
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ status: 'CONFIRMED', payment: { status: 'CAPTURED' } });
    // The booking's own ledger: the declined challenge and the approved second attempt, one row each.
    const attempts: { status: string }[] = await saga
      .database('payments')
      .where({ booking_id: created.id })
      .orderBy('created_at')
      .select('status');
    expect(attempts.map((attempt) => attempt.status)).toEqual(['DECLINED', 'APPROVED']);
    process.stdout.write(`REST webhook received: ${JSON.stringify(event)}\n`);
    process.stdout.write(
      `REST failed challenge: ${declined.status} ${JSON.stringify(declined.payment)}; seats ${JSON.stringify(held)}; second attempt ${(second.body as { status: string }).status} ${JSON.stringify(
        (second.body as { payment: unknown }).payment,
      )}\n`,
    );
  });
});

describe('gRPC: ConfirmPayment with a card that asks for 3-D Secure', () => {
  async function create() {
    const response = await grpc.createBooking({
      requestId: randomUUID(),
      tripId: trip.tripId,
      passengers: [
        {
          firstName: 'Ana',
          lastName: 'Silva',
          email: 'ana@example.com',
          seatNumber: freshSeat(),
          fareClass: 'STANDARD',
        },
      ],
      contactEmail: 'ana@example.com',
    });
    return response.booking!;
  }

  it('answers the challenge on the Booking message; passed, the webhook brings the outcome, the booking is CONFIRMED', async () => {
    const created = await create();

    const { booking: answered } = await grpc.confirmPayment({
      bookingId: created.id,
      paymentMethod: await challengedCard(),
      requestId: randomUUID(),
    });

    expect(answered).toMatchObject({
      status: BookingStatus.BOOKING_STATUS_PENDING_PAYMENT,
      payment: {
        status: PaymentStatus.PAYMENT_STATUS_NONE,
        action: {
          status: PaymentActionStatus.PAYMENT_ACTION_STATUS_REQUIRES_ACTION,
          intentId: expect.stringMatching(/^pi_/),
          clientSecret: expect.stringMatching(/^pi_.+_secret_/),
          nextAction: { type: 'use_stripe_sdk', redirectUrl: '' },
        },
      },
    });
    const action = answered!.payment!.action!;
    process.stdout.write(`gRPC payment answer: ${JSON.stringify(answered!.payment)}\n`);

    await authenticate(action.intentId, action.clientSecret, true);

    const confirmed = await eventually(
      async () => (await grpc.getBooking({ bookingId: created.id })).booking!,
      (booking) => booking.status === BookingStatus.BOOKING_STATUS_CONFIRMED,
      { timeoutMs: outcomeWithinMs },
    );
    expect(confirmed.payment).toMatchObject({
      status: PaymentStatus.PAYMENT_STATUS_CAPTURED,
      action: undefined,
    });
    const event = await webhookEventFor(created.id, action.intentId, 'payment_intent.succeeded');
    process.stdout.write(`gRPC webhook received: ${JSON.stringify(event)}\n`);
    process.stdout.write(
      `gRPC after the event: ${BookingStatus[confirmed.status]} ${
        PaymentStatus[confirmed.payment!.status]
      } ${confirmed.payment!.method}\n`,
    );
  });

  it('a failed challenge is a declined attempt with the seats still held; a second attempt pays', async () => {
    const created = await create();
    const { booking: answered } = await grpc.confirmPayment({
      bookingId: created.id,
      paymentMethod: await challengedCard(),
      requestId: randomUUID(),
    });
    const action = answered!.payment!.action!;

    await failChallenge(action.intentId, action.clientSecret);
    const declined = await eventually(
      async () => (await grpc.getBooking({ bookingId: created.id })).booking!,
      (booking) => booking.payment?.status === PaymentStatus.PAYMENT_STATUS_DECLINED,
      { timeoutMs: outcomeWithinMs },
    );
    await webhookEventFor(created.id, action.intentId, 'payment_intent.payment_failed');
    expect(declined.status).toBe(BookingStatus.BOOKING_STATUS_PENDING_PAYMENT);
    expect(declined.payment?.declineReason).toBe('payment_intent_authentication_failure');
    expect(declined.payment?.action).toBeUndefined();
    expect(await activeSeatsOf(saga.database, created.id)).toEqual([expect.stringMatching(/:HELD$/)]);

    const { booking: paid } = await grpc.confirmPayment({
      bookingId: created.id,
      paymentMethod: 'pm_card_visa',
      requestId: randomUUID(),
    });
    expect(paid).toMatchObject({
      status: BookingStatus.BOOKING_STATUS_CONFIRMED,
      payment: { status: PaymentStatus.PAYMENT_STATUS_CAPTURED },
    });
    process.stdout.write(
      `gRPC failed challenge: ${BookingStatus[declined.status]} ${PaymentStatus[declined.payment!.status]} ${
        declined.payment!.declineReason
      }; second attempt ${BookingStatus[paid!.status]}\n`,
    );
  });
});
