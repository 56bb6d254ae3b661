// Recordings of payments left open for a 3-D Secure challenge, against localstripe: outcomes and late money.
import { randomBytes, randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import type { Actor } from '../../src/domain/actor';
import type { BookingState, Money } from '../../src/domain/booking';
import type { PaymentEvent } from '../../src/domain/payment-events';
import {
  bookingWorkflowId,
  bookingWorkflowType,
  confirmPaymentUpdate,
  paymentEventSignal,
} from '../../src/workflows/shared';
import { localstripeKey } from '../../test/support/localstripe';
import { startSagaEnvironment, type SagaEnvironment } from '../../test/support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../test/support/trips';
import {
  bookingHandle,
  inputLike,
  sleep,
  startDirectly,
  type RecordedRun,
  type RecordingContext,
} from './recording';
import { authenticateAtLocalstripe } from '../../dev/stack/localstripe';

const threeDSecureCard = '4000002500003155';

/** The customer's side of localstripe: a card that asks for 3-D Secure, and the challenge passed or failed. */
class Customer {
  private readonly stripe: Stripe;

  constructor(private readonly url: string) {
    const { hostname, port, protocol } = new URL(url);
    this.stripe = new Stripe(localstripeKey, {
      host: hostname,
      port: Number(port),
      protocol: protocol === 'http:' ? 'http' : 'https',
    });
  }

  async challengedCard(): Promise<string> {
    const method = await this.stripe.paymentMethods.create({
      type: 'card',
      card: { number: threeDSecureCard, exp_month: 12, exp_year: 2034, cvc: '123' },
    });
    return method.id;
  }

  async authenticate(booking: BookingState, success: boolean): Promise<void> {
    const action = booking.payment.action;
    if (action?.clientSecret === undefined) throw new Error('the payment was not left open for a challenge');
    const status = await authenticateAtLocalstripe(this.url, {
      intentId: action.intentId,
      clientSecret: action.clientSecret,
      success,
    });
    if (status !== 200) throw new Error(`localstripe refused the authentication: ${status}`);
  }
}

/** The PaymentEvent the webhook endpoint signals once it has verified and recorded the processor's event. */
function intentEvent(
  booking: BookingState,
  intentId: string,
  outcome: 'succeeded' | 'failed',
  amount: Money,
): PaymentEvent {
  const identity = {
    eventId: `evt_${randomUUID()}`,
    createdAt: Math.floor(Date.now() / 1000),
    bookingId: booking.id,
  };
  return outcome === 'succeeded'
    ? { ...identity, type: 'payment_intent.succeeded', kind: 'intent_succeeded', intentId, amount }
    : {
        ...identity,
        type: 'payment_intent.payment_failed',
        kind: 'intent_failed',
        intentId,
        reason: 'authentication failed',
      };
}

async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await sleep(200);
  }
}

function run(name: string, bookingId: string, path: string, rows: RecordedRun['rows']): RecordedRun {
  return {
    name,
    workflowId: bookingWorkflowId(bookingId),
    workflowType: bookingWorkflowType,
    path,
    rows,
    patches: [],
  };
}

/**
 * The open-payment paths, on workers of their own whose gateway is localstripe, on a trip that departs during the
 * recording. The late money whose seat is taken runs first and alone: it stops these workers while another booking
 * (on the simulator's workers) takes the seat.
 */
export async function recordPaymentConversation(
  context: RecordingContext,
  environment: Record<string, string>,
): Promise<{ runs: RecordedRun[]; stripeSaga: SagaEnvironment }> {
  const localstripeUrl = process.env.LOCALSTRIPE_URL;
  if (localstripeUrl === undefined) throw new Error('LOCALSTRIPE_URL is not set: the global setup starts it');
  const stripeSaga = await startSagaEnvironment({
    environment: {
      ...environment,
      PAYMENT_GATEWAY: 'stripe',
      STRIPE_API_URL: localstripeUrl,
      STRIPE_SECRET_KEY: localstripeKey,
      // Required with the Stripe gateway; the recording sends no signed event through the API.
      STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
    },
    workflowBundle: context.saga.workflowBundle,
    timings: context.saga.timings,
  });
  const card = new Customer(localstripeUrl);
  const trip = await createTrip(stripeSaga.database, {
    seatCount: 20,
    departureInMs: 45_000,
    durationMinutes: 1,
  });
  const customer = await context.newCustomer();
  const runs = [await lateMoneyRefunded(context, stripeSaga, card, customer, trip)];
  runs.push(
    ...(await Promise.all([
      passedWithDispute(stripeSaga, card, customer, trip),
      failedThenPaid(stripeSaga, card, customer, trip),
      lateMoneyKept(stripeSaga, card, customer, trip),
      cancelledDuringChallenge(stripeSaga, card, customer, trip),
    ])),
  );
  return { runs, stripeSaga };
}

async function challenge(saga: SagaEnvironment, card: Customer, bookingId: string): Promise<BookingState> {
  return bookingHandle(saga, bookingId).executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: await card.challengedCard() }],
  });
}

async function passedWithDispute(
  saga: SagaEnvironment,
  card: Customer,
  customer: Actor,
  trip: TestTrip,
): Promise<RecordedRun> {
  const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['2A']));
  const open = await challenge(saga, card, booking.id);
  await card.authenticate(open, true);
  const handle = bookingHandle(saga, booking.id);
  await handle.signal(
    paymentEventSignal,
    intentEvent(open, open.payment.action!.intentId, 'succeeded', open.price.total),
  );
  await until(
    'the confirmation',
    async () => (await saga.application.getBooking(customer, booking.id)).status === 'CONFIRMED',
  );
  await handle.signal(paymentEventSignal, {
    eventId: `evt_${randomUUID()}`,
    type: 'charge.dispute.created',
    createdAt: Math.floor(Date.now() / 1000),
    bookingId: booking.id,
    kind: 'dispute_created',
    disputeId: `dp_${randomUUID()}`,
    intentId: open.payment.action!.intentId,
    amount: open.price.total,
    reason: 'fraudulent',
  });
  return run(
    'challenge-passed-then-disputed-then-completed',
    booking.id,
    'paid with a 3-D Secure card: the payment answered open (payment.action with the client secret), the challenge passed at localstripe, PaymentEvent intent_succeeded: CheckPayment, ConfirmSeats, tickets, booking-confirmed; then a dispute: recorded, ReportPaymentIncident; completed',
    ['create', 'payment-requires-action', 'payment-action-succeeded', 'payment-incident', 'completed'],
  );
}

async function failedThenPaid(
  saga: SagaEnvironment,
  card: Customer,
  customer: Actor,
  trip: TestTrip,
): Promise<RecordedRun> {
  const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['2B']));
  const open = await challenge(saga, card, booking.id);
  await card.authenticate(open, false);
  await bookingHandle(saga, booking.id).signal(
    paymentEventSignal,
    intentEvent(open, open.payment.action!.intentId, 'failed', open.price.total),
  );
  await until('the declined attempt', async () => {
    const read = await saga.application.getBooking(customer, booking.id);
    return read.payment.status === 'DECLINED';
  });
  await saga.application.confirmPayment(customer, booking.id, { paymentMethod: 'pm_card_visa' });
  return run(
    'challenge-failed-then-paid-then-completed',
    booking.id,
    'a 3-D Secure challenge failed at localstripe, PaymentEvent intent_failed: CheckPayment, the attempt declined, the seats still held; a second attempt with pm_card_visa approved at once: ConfirmSeats, tickets, booking-confirmed; completed',
    ['create', 'payment-requires-action', 'payment-action-failed', 'payment-approved', 'completed'],
  );
}

async function lateMoneyKept(
  saga: SagaEnvironment,
  card: Customer,
  customer: Actor,
  trip: TestTrip,
): Promise<RecordedRun> {
  const shortHold = saga.applicationWith({ BOOKING_HOLD_SECONDS: '3' });
  const booking = await shortHold.createBooking(customer, bookingRequest(trip, ['3A', '3B']));
  const open = await challenge(saga, card, booking.id);
  // The customer finishes as the hold lapses; no event reaches the workflow before its timer.
  await card.authenticate(open, true);
  await until(
    'the late confirmation',
    async () => (await saga.application.getBooking(customer, booking.id)).status === 'CONFIRMED',
  );
  return run(
    'paid-as-hold-lapsed-seats-kept-then-completed',
    booking.id,
    'a challenge passed as the hold lapsed, no event yet: at the hold timer CancelPayment answers approved, ReserveSeats holds the same two seats again, ConfirmSeats, tickets, booking-confirmed, ReportPaymentIncident late_payment_confirmed; completed',
    ['create', 'payment-requires-action', 'late-money-kept', 'completed'],
  );
}

async function cancelledDuringChallenge(
  saga: SagaEnvironment,
  card: Customer,
  customer: Actor,
  trip: TestTrip,
): Promise<RecordedRun> {
  const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['4A']));
  await challenge(saga, card, booking.id);
  await saga.application.cancelBooking(customer, booking.id, { reason: 'Changed my mind' });
  return run(
    'cancelled-during-challenge',
    booking.id,
    'cancelled while its 3-D Secure challenge was open: CancelPayment (cancelled at localstripe, nothing taken), ReleaseSeats, CANCELLED',
    ['create', 'payment-requires-action', 'cancel-during-payment-action'],
  );
}

/**
 * The customer pays as the hold lapses while another booking takes one of the seats: these workers are stopped over
 * the hold's end, the other booking (on the simulator's workers) takes the seat, and the workers come back to the
 * hold timer: CancelPayment answers approved, ReserveSeats is refused, everything is refunded.
 */
async function lateMoneyRefunded(
  context: RecordingContext,
  saga: SagaEnvironment,
  card: Customer,
  customer: Actor,
  trip: TestTrip,
): Promise<RecordedRun> {
  const shortHold = saga.applicationWith({ BOOKING_HOLD_SECONDS: '3' });
  const booking = await shortHold.createBooking(customer, bookingRequest(trip, ['1A']));
  const open = await challenge(saga, card, booking.id);
  await card.authenticate(open, true);
  await saga.stopWorkers();
  await sleep(Math.max(0, Date.parse(booking.holdExpiresAt) - Date.now()) + 500);
  const taker = await inputLike(saga, booking.id, ['1A']);
  await startDirectly(context.saga, { ...taker, taskQueues: context.saga.taskQueueNames });
  await saga.startWorkers();
  await until(
    'the refunded expiry',
    async () => (await saga.application.getBooking(customer, booking.id)).status === 'EXPIRED',
  );
  return run(
    'paid-as-hold-lapsed-seat-taken-refunded',
    booking.id,
    'a challenge passed as the hold lapsed while another booking took the seat: at the hold timer CancelPayment answers approved, ReserveSeats refused (SEAT_UNAVAILABLE), RefundPayment in full, ReleaseSeats, EXPIRED, booking-expired naming the refund, ReportPaymentIncident late_payment_refunded',
    ['create', 'payment-requires-action', 'late-money-refunded'],
  );
}
