// The 3-D Secure payment over REST and gRPC against localstripe: the challenge answered, passed or failed, the outcome.
import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import Stripe from 'stripe';
import request from 'supertest';
import type Koa from 'koa';
import type { BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { Actor } from '../../../src/domain/actor';
import type { Money } from '../../../src/domain/booking';
import type { PaymentEvent } from '../../../src/domain/payment-events';
import {
  BookingStatus,
  PaymentActionStatus,
  PaymentStatus,
} from '../../../src/generated/com/example/bookings/v1/booking';
import { bookingWorkflowId, paymentEventSignal } from '../../../src/workflows/shared';
import { activeSeatsOf } from '../../support/booking-records';
import {
  clientFor,
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';
import { localstripeKey } from '../../support/localstripe';
import { eventually } from '../../support/outcomes';
import { buildApp, createTokenIssuer } from '../../support/rest-app';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';

// The saga's workers (a webpack bundle), Temporal and localstripe's Python server are all in the path.
jest.setTimeout(120_000);

const localstripeUrl = process.env.LOCALSTRIPE_URL ?? '';
const threeDSecureCard = '4000002500003155';

let saga: SagaEnvironment;
let trip: TestTrip;
let customer: Actor;
let restApp: Koa;
let restToken: string;
let certificates: TestCertificates;
let grpcServer: RunningGrpcServer;
let grpc: BookingClient;
/** The customer's side of localstripe: what Stripe.js does in the browser. */
let customerSide: Stripe;
let nextSeat = 0;

beforeAll(async () => {
  if (localstripeUrl === '')
    throw new Error('LOCALSTRIPE_URL is not set: jest global-setup starts localstripe');
  saga = await startSagaEnvironment({
    environment: {
      PAYMENT_GATEWAY: 'stripe',
      STRIPE_API_URL: localstripeUrl,
      STRIPE_SECRET_KEY: localstripeKey,
      STRIPE_WEBHOOK_SECRET: 'whsec_threeDSecureTests',
    },
  });
  trip = await createTrip(saga.database, { seatCount: 16 });
  customer = await createCustomer(saga.database, saga.cipher);
  const issuer = await createTokenIssuer();
  restToken = await issuer.issueToken({ userId: customer.userId, roles: ['customer'] });
  restApp = buildApp({
    database: saga.database,
    cipher: saga.cipher,
    operationGuard: issuer.operationGuard,
    bookings: saga.application,
  });
  certificates = createTestCertificates();
  grpcServer = await startTestServer({
    certificates,
    application: saga.application,
    verifyAccessToken: () => Promise.resolve(customer),
  });
  grpc = clientFor(grpcServer, certificates);
  const { hostname, port, protocol } = new URL(localstripeUrl);
  customerSide = new Stripe(localstripeKey, {
    host: hostname,
    port: Number(port),
    protocol: protocol === 'http:' ? 'http' : 'https',
  });
});

afterAll(async () => {
  grpc?.close();
  await grpcServer?.stop();
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
  const response = await fetch(`${localstripeUrl}/v1/payment_intents/${intentId}/_authenticate`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${localstripeKey}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ client_secret: clientSecret, success: String(success) }),
    signal: AbortSignal.timeout(5000),
  });
  expect(response.status).toBe(200);
}

/**
 * What the webhook endpoint does once it has verified and recorded the processor's event: the PaymentEvent it
 * maps the event to, signalled to the booking's workflow.
 */
async function deliver(
  bookingId: string,
  intentId: string,
  outcome: 'succeeded' | 'failed',
  amount: Money,
): Promise<void> {
  const identity = { eventId: `evt_${randomUUID()}`, createdAt: Math.floor(Date.now() / 1000), bookingId };
  const event: PaymentEvent =
    outcome === 'succeeded'
      ? { ...identity, type: 'payment_intent.succeeded', kind: 'intent_succeeded', intentId, amount }
      : {
          ...identity,
          type: 'payment_intent.payment_failed',
          kind: 'intent_failed',
          intentId,
          reason: 'authentication failed',
        };
  await saga.client.workflow.getHandle(bookingWorkflowId(bookingId)).signal(paymentEventSignal, event);
}

const rest = {
  call(method: 'get' | 'post', path: string, body?: object) {
    const call = request(restApp.callback())
      [method](path)
      .set('authorization', `Bearer ${restToken}`)
      .set('idempotency-key', randomUUID());
    return body === undefined ? call : call.send(body);
  },
  async create(): Promise<{ id: string; price: { total: { amount_minor: number; currency: string } } }> {
    const response = await rest.call('post', '/v1/bookings', {
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
    const response = await rest.call('get', `/v1/bookings/${id}`);
    expect(response.status).toBe(200);
    return response.body as Record<string, unknown> & { status: string; payment: { status: string } };
  },
};

const euros = (total: { amount_minor: number; currency: string }): Money => ({
  amountMinor: total.amount_minor,
  currency: total.currency,
});

describe('REST: POST /v1/bookings/{id}/payment with a card that asks for 3-D Secure', () => {
  it('answers the challenge with what the client needs; passed and delivered, the booking is CONFIRMED', async () => {
    const created = await rest.create();

    const payment = await rest.call('post', `/v1/bookings/${created.id}/payment`, {
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
    await deliver(created.id, intentId, 'succeeded', euros(created.price.total));

    const confirmed = await eventually(
      () => rest.booking(created.id),
      (booking) => booking.status === 'CONFIRMED',
    );
    expect(confirmed).toMatchObject({
      status: 'CONFIRMED',
      payment: { status: 'CAPTURED', method: expect.stringContaining('3155') },
      amount_paid: created.price.total,
    });
    expect(confirmed.payment).toMatchObject({ action: null });
    expect(await activeSeatsOf(saga.database, created.id)).toEqual([expect.stringMatching(/:BOOKED$/)]);
    process.stdout.write(`REST after the event: ${confirmed.status} ${JSON.stringify(confirmed.payment)}\n`);
  });

  it('a failed challenge is a declined attempt with the seats still held; a second attempt pays', async () => {
    const created = await rest.create();
    const payment = await rest.call('post', `/v1/bookings/${created.id}/payment`, {
      payment_method: await challengedCard(),
    });
    const { intent_id: intentId, client_secret: clientSecret } = (
      payment.body as { payment: { action: { intent_id: string; client_secret: string } } }
    ).payment.action;

    await authenticate(intentId, clientSecret, false);
    await deliver(created.id, intentId, 'failed', euros(created.price.total));
    const declined = await eventually(
      () => rest.booking(created.id),
      (booking) => booking.payment.status === 'DECLINED',
    );

    expect(declined).toMatchObject({ status: 'PENDING_PAYMENT', payment: { status: 'DECLINED' } });
    expect(declined.payment).toMatchObject({ action: null });
    expect(await activeSeatsOf(saga.database, created.id)).toEqual([expect.stringMatching(/:HELD$/)]);

    const second = await rest.call('post', `/v1/bookings/${created.id}/payment`, {
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
    process.stdout.write(
      `REST failed challenge: ${declined.status} ${JSON.stringify(declined.payment)}; second attempt ${
        (second.body as { status: string }).status
      }\n`,
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

  it('answers the challenge on the Booking message; passed and delivered, the booking is CONFIRMED', async () => {
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
    await deliver(created.id, action.intentId, 'succeeded', {
      amountMinor: created.price!.total!.amountMinor,
      currency: created.price!.total!.currency,
    });

    const confirmed = await eventually(
      async () => (await grpc.getBooking({ bookingId: created.id })).booking!,
      (booking) => booking.status === BookingStatus.BOOKING_STATUS_CONFIRMED,
    );
    expect(confirmed.payment).toMatchObject({
      status: PaymentStatus.PAYMENT_STATUS_CAPTURED,
      action: undefined,
    });
    process.stdout.write(`gRPC after the event: ${BookingStatus[confirmed.status]}\n`);
  });

  it('a failed challenge is a declined attempt with the seats still held; a second attempt pays', async () => {
    const created = await create();
    const { booking: answered } = await grpc.confirmPayment({
      bookingId: created.id,
      paymentMethod: await challengedCard(),
      requestId: randomUUID(),
    });
    const action = answered!.payment!.action!;

    await authenticate(action.intentId, action.clientSecret, false);
    await deliver(created.id, action.intentId, 'failed', {
      amountMinor: created.price!.total!.amountMinor,
      currency: created.price!.total!.currency,
    });
    const declined = await eventually(
      async () => (await grpc.getBooking({ bookingId: created.id })).booking!,
      (booking) => booking.payment?.status === PaymentStatus.PAYMENT_STATUS_DECLINED,
    );
    expect(declined.status).toBe(BookingStatus.BOOKING_STATUS_PENDING_PAYMENT);
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
  });
});
