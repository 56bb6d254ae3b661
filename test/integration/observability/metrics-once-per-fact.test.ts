// Business counters count each fact once where it happens, even when Temporal runs the activity again.
import type { ReserveSeatsInput } from '../../../src/activities/interface';
import { createNotificationActivities } from '../../../src/activities/notifications';
import { createPaymentActivities } from '../../../src/activities/payments';
import { createReadModelActivities } from '../../../src/activities/read-model';
import { createSeatActivities } from '../../../src/activities/seats';
import { createPaymentGatewaySimulator } from '../../../src/adapters/payment-gateway-simulator';
import { createPaymentSimulatorLedger } from '../../../src/db/payment-simulator-ledger';
import type { BookingState } from '../../../src/domain/booking';
import { activityKey } from '../../../src/domain/ids';
import { createBusinessMetrics, type BusinessMetrics } from '../../../src/observability/metrics';
import {
  bookingSnapshot,
  failureOf,
  runActivity,
  testPassenger,
  useActivityTestBed,
} from '../../support/activities';
import { metricValue, parseMetrics } from '../../support/metrics';

const testBed = useActivityTestBed({ poolSize: 6 });
let nextSeat = 0;

function freshSeat(): string {
  const seatNumber = testBed.trip.seatNumbers[nextSeat];
  nextSeat += 1;
  return seatNumber;
}

async function value(metrics: BusinessMetrics, name: string, labels: Record<string, string> = {}) {
  return metricValue(parseMetrics(await metrics.registry.metrics()), name, labels);
}

function activitiesCountingInto(metrics: BusinessMetrics) {
  const dependencies = { database: testBed.database, cipher: testBed.cipher, metrics };
  return {
    seats: createSeatActivities({ ...dependencies, lapsedHoldGraceSeconds: 0 }),
    readModel: createReadModelActivities(dependencies),
    payments: createPaymentActivities({
      ...dependencies,
      paymentGateway: createPaymentGatewaySimulator(createPaymentSimulatorLedger(testBed.database)),
    }),
    notifications: createNotificationActivities({
      ...dependencies,
      emailSender: { send: () => Promise.resolve({ providerMessageId: 'test-email' }) },
      smsSender: { send: () => Promise.resolve({ providerMessageId: 'test-sms' }) },
    }),
  };
}

function creatingReservation(booking: BookingState): ReserveSeatsInput {
  return {
    bookingId: booking.id,
    tripId: booking.tripId,
    seats: booking.passengers.map(({ id, seatNumber, fareClass }) => ({
      passengerId: id,
      seatNumber,
      fareClass,
    })),
    holdExpiresAt: booking.holdExpiresAt,
    idempotencyKey: activityKey(booking.id, 'reserve-seats', booking.version),
    booking,
  };
}

/** A booking whose seats are held (its row written by the creating reservation), counted into `metrics`. */
async function heldBooking(metrics: BusinessMetrics, seats = 1): Promise<BookingState> {
  const booking = bookingSnapshot(
    testBed.trip,
    Array.from({ length: seats }, () => testPassenger(freshSeat())),
  );
  await runActivity(activitiesCountingInto(metrics).seats, 'ReserveSeats', creatingReservation(booking));
  return booking;
}

describe('counted once per fact', () => {
  it('a creating reservation run twice: one booking created, its seats held once', async () => {
    const metrics = createBusinessMetrics();
    const { seats } = activitiesCountingInto(metrics);
    const booking = bookingSnapshot(testBed.trip, [testPassenger(freshSeat()), testPassenger(freshSeat())]);
    await runActivity(seats, 'ReserveSeats', creatingReservation(booking));
    await runActivity(seats, 'ReserveSeats', creatingReservation(booking));
    expect(await value(metrics, 'bus_booking_booking_transitions_total', { transition: 'created' })).toBe(1);
    expect(await value(metrics, 'bus_booking_seats_held_total')).toBe(2);
  });

  it('a creating reservation of a taken seat: not booked, for seats_unavailable, nothing created', async () => {
    const metrics = createBusinessMetrics();
    const holder = await heldBooking(createBusinessMetrics());
    const taker = bookingSnapshot(testBed.trip, [testPassenger(holder.passengers[0].seatNumber)]);
    const failure = await failureOf(
      runActivity(activitiesCountingInto(metrics).seats, 'ReserveSeats', creatingReservation(taker)),
    );
    expect(failure.type).toBe('SEAT_UNAVAILABLE');
    expect(
      await value(metrics, 'bus_booking_booking_transitions_total', {
        transition: 'not_booked',
        reason: 'seats_unavailable',
      }),
    ).toBe(1);
    expect(await value(metrics, 'bus_booking_booking_transitions_total', { transition: 'created' })).toBe(0);
    expect(await value(metrics, 'bus_booking_seats_held_total')).toBe(0);
  });

  it('a read-model write retried: the transition counted once; an older snapshot arriving late: not at all', async () => {
    const metrics = createBusinessMetrics();
    const booking = await heldBooking(createBusinessMetrics());
    const { readModel } = activitiesCountingInto(metrics);
    const confirmed: BookingState = { ...booking, status: 'CONFIRMED', version: 2 };
    await runActivity(readModel, 'RecordBooking', confirmed);
    await runActivity(readModel, 'RecordBooking', confirmed);
    await runActivity(readModel, 'RecordBooking', booking);
    expect(await value(metrics, 'bus_booking_booking_transitions_total', { transition: 'confirmed' })).toBe(
      1,
    );
    expect(await value(metrics, 'bus_booking_booking_transitions_total')).toBe(1);
  });

  it('a change of passengers is counted as changed, a declined attempt on a pending booking is not', async () => {
    const metrics = createBusinessMetrics();
    const booking = await heldBooking(createBusinessMetrics());
    const { readModel } = activitiesCountingInto(metrics);
    const declinedAt = new Date().toISOString();
    await runActivity(readModel, 'RecordBooking', {
      ...booking,
      version: 2,
      payment: { status: 'DECLINED', lastAttemptAt: declinedAt, declineReason: 'card_declined' },
    });
    await runActivity(readModel, 'RecordBooking', {
      ...booking,
      version: 3,
      passengers: [{ ...booking.passengers[0], firstName: 'Ana Maria' }],
      payment: { status: 'DECLINED', lastAttemptAt: declinedAt, declineReason: 'card_declined' },
    });
    expect(await value(metrics, 'bus_booking_booking_transitions_total', { transition: 'changed' })).toBe(1);
    expect(await value(metrics, 'bus_booking_booking_transitions_total')).toBe(1);
  });

  it('a charge retried gets the gateway replay and is counted once; a decline too', async () => {
    const metrics = createBusinessMetrics();
    const booking = await heldBooking(createBusinessMetrics());
    const { payments } = activitiesCountingInto(metrics);
    const charge = (token: string, attempt: number) => ({
      bookingId: booking.id,
      idempotencyKey: activityKey(booking.id, 'process-payment', attempt),
      amount: { amountMinor: 2500, currency: 'EUR' },
      paymentToken: token,
    });
    await runActivity(payments, 'ProcessPayment', charge('tok_chargeDeclined', 1)).catch(() => undefined);
    await runActivity(payments, 'ProcessPayment', charge('tok_chargeDeclined', 1)).catch(() => undefined);
    await runActivity(payments, 'ProcessPayment', charge('tok_visa', 2));
    await runActivity(payments, 'ProcessPayment', charge('tok_visa', 2));
    expect(await value(metrics, 'bus_booking_payments_total', { outcome: 'declined' })).toBe(1);
    expect(await value(metrics, 'bus_booking_payments_total', { outcome: 'approved' })).toBe(1);
  });

  it('a refund retried is counted once, with its amount once', async () => {
    const metrics = createBusinessMetrics();
    const booking = await heldBooking(createBusinessMetrics());
    const { payments } = activitiesCountingInto(metrics);
    const { transactionId } = await runActivity(payments, 'ProcessPayment', {
      bookingId: booking.id,
      idempotencyKey: activityKey(booking.id, 'process-payment', 1),
      amount: { amountMinor: 2500, currency: 'EUR' },
      paymentToken: 'tok_visa',
    });
    const refund = {
      bookingId: booking.id,
      idempotencyKey: activityKey(booking.id, 'refund-payment', 1),
      transactionId,
      amount: { amountMinor: 1250, currency: 'EUR' },
    };
    await runActivity(payments, 'RefundPayment', refund);
    await runActivity(payments, 'RefundPayment', refund);
    expect(await value(metrics, 'bus_booking_refunds_total', { outcome: 'succeeded' })).toBe(1);
    expect(await value(metrics, 'bus_booking_refunded_amount_minor_total', { currency: 'EUR' })).toBe(1250);
    expect(
      await value(metrics, 'bus_booking_compensations_total', {
        step: 'refund_payment',
        outcome: 'succeeded',
      }),
    ).toBe(1);
  });

  it('a refund the gateway refuses is counted as failed', async () => {
    const metrics = createBusinessMetrics();
    const booking = await heldBooking(createBusinessMetrics());
    const { payments } = activitiesCountingInto(metrics);
    await failureOf(
      runActivity(payments, 'RefundPayment', {
        bookingId: booking.id,
        idempotencyKey: activityKey(booking.id, 'refund-payment', 1),
        transactionId: 'no-such-charge',
        amount: { amountMinor: 100, currency: 'EUR' },
      }),
    );
    expect(await value(metrics, 'bus_booking_refunds_total', { outcome: 'failed' })).toBe(1);
    expect(await value(metrics, 'bus_booking_refunds_total', { outcome: 'succeeded' })).toBe(0);
    expect(
      await value(metrics, 'bus_booking_compensations_total', { step: 'refund_payment', outcome: 'failed' }),
    ).toBe(1);
  });

  it('a seat release retried releases and counts the seats once', async () => {
    const metrics = createBusinessMetrics();
    const booking = await heldBooking(createBusinessMetrics(), 2);
    const { seats } = activitiesCountingInto(metrics);
    const release = {
      bookingId: booking.id,
      tripId: booking.tripId,
      idempotencyKey: activityKey(booking.id, 'release-seats', 'cancelled'),
    };
    await runActivity(seats, 'ReleaseSeats', release);
    await runActivity(seats, 'ReleaseSeats', release);
    expect(await value(metrics, 'bus_booking_seats_released_total')).toBe(2);
    expect(
      await value(metrics, 'bus_booking_compensations_total', {
        step: 'release_seats',
        outcome: 'succeeded',
      }),
    ).toBe(1);
  });

  it('a notification retried is sent and counted once', async () => {
    const metrics = createBusinessMetrics();
    const booking = await heldBooking(createBusinessMetrics());
    const { notifications } = activitiesCountingInto(metrics);
    const email = {
      bookingId: booking.id,
      idempotencyKey: activityKey(booking.id, 'send-email', 'expired'),
      template: 'booking-expired' as const,
      to: 'ana.silva@example.com',
      parameters: {
        departureTime: testBed.trip.departureTime.toISOString(),
        timeZone: 'Europe/Lisbon',
        holdExpiresAt: booking.holdExpiresAt,
      },
    };
    await runActivity(notifications, 'SendEmailNotification', email);
    await runActivity(notifications, 'SendEmailNotification', email);
    expect(
      await value(metrics, 'bus_booking_notifications_total', { channel: 'email', outcome: 'sent' }),
    ).toBe(1);
  });
});
