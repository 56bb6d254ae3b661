// Payment as a conversation: an open payment, its outcome by PaymentEvent, and money that arrives after the hold.
import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type { BookingState, Money } from '../../src/domain/booking';
import type { PaymentEvent } from '../../src/domain/payment-events';
import {
  cancelBookingUpdate,
  confirmPaymentUpdate,
  paymentEventSignal,
  updateBookingUpdate,
} from '../../src/workflows/shared';
import {
  activitiesOf,
  BookingWorkflowTier,
  challengedCard,
  quietRuntime,
  stateOf,
  updateErrorCode,
  type TestBooking,
} from './support/booking-workflow';

const tier = new BookingWorkflowTier();

beforeAll(async () => {
  quietRuntime();
  await tier.start();
});

afterAll(() => tier.stop());

type IntentEventKind = 'intent_succeeded' | 'intent_failed' | 'intent_canceled' | 'intent_requires_action';

/** The PaymentEvent a verified webhook carries for the booking's intent. */
function intentEvent(
  booking: Pick<TestBooking, 'bookingId'>,
  kind: IntentEventKind,
  intentId: string,
  amount: Money,
  eventId = `evt_${randomUUID()}`,
): PaymentEvent {
  const identity = { eventId, createdAt: Math.floor(Date.now() / 1000), bookingId: booking.bookingId };
  switch (kind) {
    case 'intent_succeeded':
      return { ...identity, type: 'payment_intent.succeeded', kind, intentId, amount };
    case 'intent_failed':
      return {
        ...identity,
        type: 'payment_intent.payment_failed',
        kind,
        intentId,
        reason: 'authentication failed',
      };
    case 'intent_canceled':
      return { ...identity, type: 'payment_intent.canceled', kind, intentId };
    case 'intent_requires_action':
      return { ...identity, type: 'payment_intent.requires_action', kind, intentId };
  }
}

/** Waits, without skipping time, until the workflow's state shows what `done` looks for. */
async function stateWhen(
  booking: TestBooking,
  done: (state: BookingState) => boolean,
): Promise<BookingState> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const state = await stateOf(booking);
    if (state !== undefined && done(state)) return state;
    if (Date.now() > deadline) throw new Error(`the booking never got there: ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A booking whose payment waits on the customer's 3-D Secure challenge. */
async function challenged(options: Parameters<BookingWorkflowTier['createBooking']>[0] = {}) {
  const booking = await tier.createBooking(options);
  const answer = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: challengedCard }],
  });
  const action = answer.payment.action;
  if (action === undefined) throw new Error('the payment was not left open');
  return { ...booking, answer, intentId: action.intentId, amount: answer.price.total };
}

test('payment requires action: answered at once with what the client needs, the booking shows it without the secret', async () => {
  const booking = await challenged();

  expect(booking.answer).toMatchObject({
    status: 'PENDING_PAYMENT',
    payment: {
      status: 'NONE',
      action: {
        status: 'REQUIRES_ACTION',
        intentId: booking.intentId,
        nextActionType: 'use_stripe_sdk',
        clientSecret: `${booking.intentId}_secret_test`,
      },
    },
  });
  const shown = await stateOf(booking);
  expect(shown?.payment.action).toEqual({
    status: 'REQUIRES_ACTION',
    intentId: booking.intentId,
    nextActionType: 'use_stripe_sdk',
  });
  // The same request again (a client that lost the answer) gets the same challenge, and nothing is charged twice.
  const again = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: challengedCard }],
  });
  expect(again.payment.action).toEqual(booking.answer.payment.action);
  // A change would alter the price the open payment is for.
  expect(
    await updateErrorCode(
      booking.handle.executeUpdate(updateBookingUpdate, {
        args: [
          { changes: { seatChanges: [{ passengerId: booking.created.passengers[0].id, seatNumber: '3A' }] } },
        ],
      }),
    ),
  ).toBe('BOOKING_STATE_CONFLICT');
  expect(activitiesOf(booking)).toEqual(['ReserveSeats', 'ProcessPayment']);
});

test('challenge passed, intent_succeeded → CONFIRMED; a duplicate, another intent and a late requires_action change nothing', async () => {
  const booking = await challenged({ contactPhone: '+351912345678' });
  tier.finishChallenge(booking, booking.intentId, 'succeeded');
  const succeeded = intentEvent(booking, 'intent_succeeded', booking.intentId, booking.amount);

  await booking.handle.signal(paymentEventSignal, succeeded);
  const confirmed = await stateWhen(booking, (state) => state.status === 'CONFIRMED');
  await booking.handle.signal(paymentEventSignal, succeeded);
  await booking.handle.signal(
    paymentEventSignal,
    intentEvent(booking, 'intent_succeeded', 'pi_someone_else', booking.amount),
  );
  await booking.handle.signal(
    paymentEventSignal,
    intentEvent(booking, 'intent_requires_action', booking.intentId, booking.amount),
  );

  expect(confirmed).toMatchObject({
    amountPaid: booking.amount,
    payment: { status: 'CAPTURED', method: 'visa •••• 3155' },
    paymentAttempts: [{ attemptNumber: 1, outcome: 'APPROVED' }],
  });
  expect(confirmed.payment.action).toBeUndefined();
  const later = await stateOf(booking);
  expect(later?.version).toBe(confirmed.version);
  const activities = activitiesOf(booking);
  expect(activities.slice(0, 5)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'CheckPayment',
    'ConfirmSeats',
    'IssueTickets',
  ]);
  expect(activities.slice(5).sort()).toEqual(['SendEmailNotification', 'SendSMSNotification']);
});

test('challenge failed → the attempt declined, seats still held, PENDING_PAYMENT; a second attempt pays', async () => {
  const booking = await challenged();
  tier.finishChallenge(booking, booking.intentId, 'failed');

  await booking.handle.signal(
    paymentEventSignal,
    intentEvent(booking, 'intent_failed', booking.intentId, booking.amount),
  );
  const declined = await stateWhen(booking, (state) => state.paymentAttempts.length === 1);
  const paid = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });

  expect(declined).toMatchObject({
    status: 'PENDING_PAYMENT',
    payment: { status: 'DECLINED', declineReason: 'authentication_failed' },
    paymentAttempts: [{ attemptNumber: 1, outcome: 'DECLINED', declineReason: 'authentication_failed' }],
  });
  expect(declined.payment.action).toBeUndefined();
  expect(paid).toMatchObject({
    status: 'CONFIRMED',
    paymentAttempts: [{ outcome: 'DECLINED' }, { attemptNumber: 2, outcome: 'APPROVED' }],
  });
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'CheckPayment',
    'ProcessPayment',
    'ConfirmSeats',
    'IssueTickets',
    'SendEmailNotification',
  ]);
});

test('intent_canceled → PENDING_PAYMENT with nothing open, nothing released', async () => {
  const booking = await challenged();
  tier.finishChallenge(booking, booking.intentId, 'canceled');

  await booking.handle.signal(
    paymentEventSignal,
    intentEvent(booking, 'intent_canceled', booking.intentId, booking.amount),
  );
  const closed = await stateWhen(booking, (state) => state.payment.action === undefined);

  expect(closed).toMatchObject({
    status: 'PENDING_PAYMENT',
    paymentAttempts: [],
    payment: { status: 'NONE' },
  });
  expect(activitiesOf(booking)).toEqual(['ReserveSeats', 'ProcessPayment', 'CheckPayment']);
});

test('the hold lapses with the challenge unfinished: the payment is cancelled first, then EXPIRED with nothing taken', async () => {
  const booking = await challenged({ timings: { holdDurationMs: 1_000 } });

  const { booking: ended } = (await booking.handle.result()) as { booking: BookingState };

  expect(ended).toMatchObject({ status: 'EXPIRED', amountPaid: { amountMinor: 0 } });
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'CancelPayment',
    'ReleaseSeats',
    'SendEmailNotification',
  ]);
});

test('money that arrives late, the seats still free: the same seats held again on every leg and CONFIRMED', async () => {
  const booking = await challenged({ seats: ['2A', '2B'], timings: { holdDurationMs: 1_000 } });
  // The customer finished the challenge as the hold lapsed; the processor's event has not arrived.
  tier.finishChallenge(booking, booking.intentId, 'succeeded');

  await tier.skip(2_000);
  const confirmed = await stateWhen(booking, (state) => state.status === 'CONFIRMED');

  expect(confirmed).toMatchObject({ amountPaid: booking.amount, amountRefunded: { amountMinor: 0 } });
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'CancelPayment',
    'ReserveSeats',
    'ConfirmSeats',
    'IssueTickets',
    'SendEmailNotification',
    'ReportPaymentIncident',
  ]);
  const holdAgain = booking.calls.filter((call) => call.activity === 'ReserveSeats')[1].input;
  expect(holdAgain).toMatchObject({
    seats: [{ seatNumber: '2A' }, { seatNumber: '2B' }],
  });
  expect(holdAgain.booking).toBeUndefined();
  expect(booking.calls.at(-1)?.input).toMatchObject({
    kind: 'late_payment_confirmed',
    reference: booking.intentId,
  });
});

test('money that arrives late, a seat taken meanwhile: refunded in full, EXPIRED, the customer told', async () => {
  const booking = await challenged({
    timings: { holdDurationMs: 1_000 },
    outcomes: { seatTakenOnHoldAgain: true },
  });
  tier.finishChallenge(booking, booking.intentId, 'succeeded');

  const { booking: ended } = (await booking.handle.result()) as { booking: BookingState };

  expect(ended).toMatchObject({
    status: 'EXPIRED',
    amountPaid: booking.amount,
    amountRefunded: booking.amount,
    payment: { status: 'REFUNDED' },
  });
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'CancelPayment',
    'ReserveSeats',
    'RefundPayment',
    'ReleaseSeats',
    'SendEmailNotification',
    'ReportPaymentIncident',
  ]);
  const refund = booking.calls.find((call) => call.activity === 'RefundPayment')?.input;
  expect(refund).toMatchObject({ transactionId: booking.intentId, amount: booking.amount });
  const notice = booking.calls.find((call) => call.activity === 'SendEmailNotification')?.input;
  expect(notice).toMatchObject({
    template: 'booking-expired',
    parameters: { refundAmountMinor: booking.amount.amountMinor, currency: booking.amount.currency },
  });
});

test('cancel during an unfinished challenge: the payment cancelled, CANCELLED, nothing to refund', async () => {
  const booking = await challenged();

  const cancelled = await booking.handle.executeUpdate(cancelBookingUpdate, {
    args: [{ reason: 'Changed my mind' }],
  });

  expect(cancelled).toMatchObject({ status: 'CANCELLED', amountPaid: { amountMinor: 0 } });
  expect(activitiesOf(booking)).toEqual(['ReserveSeats', 'ProcessPayment', 'CancelPayment', 'ReleaseSeats']);
});

test('cancel as the customer finishes the challenge: the money refunded in full, CANCELLED, the customer told', async () => {
  const booking = await challenged();
  tier.finishChallenge(booking, booking.intentId, 'succeeded');

  const cancelled = await booking.handle.executeUpdate(cancelBookingUpdate, {
    args: [{ reason: 'Changed my mind' }],
  });

  expect(cancelled).toMatchObject({
    status: 'CANCELLED',
    amountPaid: booking.amount,
    amountRefunded: booking.amount,
  });
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'CancelPayment',
    'RefundPayment',
    'ReleaseSeats',
    'SendEmailNotification',
    'ReportPaymentIncident',
  ]);
});

test('refund_failed and dispute_created: recorded on the booking and reported to operators, once each', async () => {
  const booking = await tier.createBooking();
  const paid = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });
  const identity = { createdAt: Math.floor(Date.now() / 1000), bookingId: booking.bookingId };
  const refundFailed: PaymentEvent = {
    ...identity,
    eventId: 'evt_refund_failed',
    type: 'refund.updated',
    kind: 'refund_failed',
    refundId: 're_1',
    intentId: undefined,
    amount: paid.price.total,
    reason: 'expired_or_canceled_card',
  };
  const dispute: PaymentEvent = {
    ...identity,
    eventId: 'evt_dispute',
    type: 'charge.dispute.created',
    kind: 'dispute_created',
    disputeId: 'dp_1',
    intentId: undefined,
    amount: paid.price.total,
    reason: 'fraudulent',
  };

  await booking.handle.signal(paymentEventSignal, refundFailed);
  await booking.handle.signal(paymentEventSignal, refundFailed);
  await booking.handle.signal(paymentEventSignal, dispute);
  const recorded = await stateWhen(booking, (state) => (state.paymentIncidents ?? []).length === 2);

  expect(recorded.paymentIncidents).toMatchObject([
    {
      kind: 'REFUND_FAILED',
      eventId: 'evt_refund_failed',
      reference: 're_1',
      reason: 'expired_or_canceled_card',
    },
    { kind: 'DISPUTE_CREATED', eventId: 'evt_dispute', reference: 'dp_1', reason: 'fraudulent' },
  ]);
  expect(recorded.status).toBe('CONFIRMED');
  const reports = booking.calls.filter((call) => call.activity === 'ReportPaymentIncident');
  expect(reports.map((call) => call.input.kind)).toEqual(['refund_failed', 'dispute_created']);
});
