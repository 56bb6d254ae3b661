// An operator cancels a trip while creates, payments and seat changes race it: nothing stays confirmed, held or charged.
import type { BookingView, TripCancellationView } from '../../../src/application/interface';
import type { Actor } from '../../../src/domain/actor';
import { findDomainError, type DomainError } from '../../../src/domain/errors';
import { paymentLedger } from '../../support/booking-records';
import { eventually } from '../../support/outcomes';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { actorOf, createCustomer, insertUser } from '../../support/users';

jest.setTimeout(240_000);

let saga: SagaEnvironment;
let trip: TestTrip;
let customer: Actor;
let agent: Actor;

beforeAll(async () => {
  saga = await startSagaEnvironment({ environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100' } });
  trip = await createTrip(saga.database, { seatCount: 40 });
  customer = await createCustomer(saga.database, saga.cipher);
  agent = actorOf(await insertUser(saga.database, saga.cipher, { roles: ['agent'] }));
});

afterAll(async () => {
  await saga?.stop();
});

/** The domain error a call failed with; a call that succeeded fails the test. */
async function failureOf(work: Promise<unknown>): Promise<DomainError> {
  const error: unknown = await work.then(
    () => new Error('the call succeeded'),
    (thrown: unknown) => thrown,
  );
  const domainError = findDomainError(error);
  if (domainError === undefined) throw error;
  return domainError;
}

/** The error code a call failed with, or its result. */
function settle<T>(work: Promise<T>): Promise<T | string> {
  return work.catch((error: unknown) => {
    const domainError = findDomainError(error);
    if (domainError === undefined) throw error;
    return domainError.code;
  });
}

function untilFinished(tripId: string): Promise<TripCancellationView> {
  return eventually(
    () => saga.application.getTripCancellation(agent, tripId),
    (cancellation) => cancellation.status === 'FINISHED',
    { timeoutMs: 120_000, intervalMs: 250 },
  );
}

/** Every booking row of the trip, after each workflow is done with what it was asked (no update in flight). */
async function bookingsOfTrip(tripId: string): Promise<{ id: string; status: string }[]> {
  return saga.database('bookings').where({ trip_id: tripId }).orderBy('id').select('id', 'status');
}

test('a trip cancelled while creates, payments and seat changes race it ends with nothing confirmed, held or charged', async () => {
  const seats = trip.seatNumbers;
  const { application } = saga;
  const confirmed: BookingView[] = [];
  for (const seat of seats.slice(0, 10)) {
    const pending = await application.createBooking(customer, bookingRequest(trip, [seat]));
    confirmed.push(await application.confirmPayment(customer, pending.id, { paymentToken: 'tok_visa' }));
  }
  const pending = await Promise.all(
    seats.slice(10, 16).map((seat) => application.createBooking(customer, bookingRequest(trip, [seat]))),
  );

  const creates = seats
    .slice(20, 30)
    .map((seat) => settle(application.createBooking(customer, bookingRequest(trip, [seat]))));
  const payments = pending.map((booking) =>
    settle(application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' })),
  );
  const seatChanges = confirmed.slice(0, 4).map((booking, index) =>
    settle(
      application.updateBooking(customer, booking.id, {
        seatChanges: [{ passengerId: booking.passengers[0].id, seatNumber: seats[32 + index] }],
      }),
    ),
  );
  // Not a wait for state: the cancel is put a moment after the others so that it lands among them, not first.
  const cancel = new Promise((resolve) => setTimeout(resolve, 150)).then(() =>
    application.cancelTrip(agent, trip.tripId, { reason: 'The bus broke down' }),
  );
  const [started, ...raced] = await Promise.all([cancel, ...creates, ...payments, ...seatChanges]);
  expect(started.tripId).toBe(trip.tripId);
  // A create or payment that lost the race is refused with the trip's cancellation, never anything unexplained.
  for (const outcome of raced) {
    if (typeof outcome === 'string')
      expect(['BOOKING_STATE_CONFLICT', 'VALIDATION_FAILED']).toContain(outcome);
  }

  const finished = await untilFinished(trip.tripId);
  expect(finished.failedBookings).toEqual([]);
  expect(finished.counts.failed).toBe(0);
  expect(finished.counts.remaining).toBe(0);
  expect(finished.counts.cancelled).toBeGreaterThanOrEqual(10);

  // Creates refused by the trip's mark end without a booking; give any still holding a moment to end.
  const rows = await bookingsOfTrip(trip.tripId);
  expect(rows.filter((row) => row.status === 'CONFIRMED' || row.status === 'PENDING_PAYMENT')).toEqual([]);
  for (const row of rows) {
    const ledger = await paymentLedger(saga.database, row.id);
    // Every captured charge came back, in full and once: the simulator refuses a refund beyond a charge.
    expect({ booking: row.id, refunded: ledger.refundedMinor }).toEqual({
      booking: row.id,
      refunded: ledger.capturedMinor,
    });
    expect(ledger.refunds.length).toBeLessThanOrEqual(ledger.charges.length);
  }
  const active = await saga
    .database('seat_allocations')
    .where({ trip_id: trip.tripId })
    .whereIn('state', ['HELD', 'BOOKED'])
    .count<{ count: string }[]>('id as count');
  expect(Number(active[0].count)).toBe(0);
  const tripRow: { status: string; cancellation_reason: string } | undefined = await saga
    .database('trips')
    .where({ id: trip.tripId })
    .first('status', 'cancellation_reason');
  expect(tripRow).toEqual({ status: 'CANCELLED', cancellation_reason: 'The bus broke down' });

  // The passengers of the confirmed bookings heard why, once each.
  const notices: { count: string }[] = await saga
    .database('notifications')
    .whereIn(
      'booking_id',
      confirmed.map((booking) => booking.id),
    )
    .where({ template: 'trip-cancelled', channel: 'EMAIL' })
    .count('id as count');
  expect(Number(notices[0].count)).toBe(confirmed.length);

  // A second call answers the same cancellation, with its first reason, and cancels or refunds nothing more.
  const again = await application.cancelTrip(agent, trip.tripId, { reason: 'Another reason' });
  expect(again).toMatchObject({
    tripId: trip.tripId,
    reason: 'The bus broke down',
    cancelledAt: finished.cancelledAt,
    status: 'FINISHED',
    counts: finished.counts,
  });
  // A create on the cancelled trip is refused before anything is held.
  await expect(settle(application.createBooking(customer, bookingRequest(trip, [seats[39]])))).resolves.toBe(
    'VALIDATION_FAILED',
  );
});

test('bad input: unknown trip, departed trip, missing reason, a customer each get a clear error', async () => {
  const { application } = saga;
  const unknown = await settle(
    application.cancelTrip(agent, '00000000-0000-4000-8000-000000000001', { reason: 'Breakdown' }),
  );
  expect(unknown).toBe('NOT_FOUND');

  const departed = await createTrip(saga.database, { seatCount: 4, departureInMs: -60_000 });
  const refusal = await failureOf(application.cancelTrip(agent, departed.tripId, { reason: 'Breakdown' }));
  expect(refusal).toMatchObject({
    code: 'BOOKING_STATE_CONFLICT',
    details: { tripId: departed.tripId, tripStatus: 'DEPARTED' },
  });
  expect(refusal.message).toMatch(/cannot be cancelled: it departed at/);

  const other = await createTrip(saga.database, { seatCount: 4 });
  for (const body of [{}, { reason: '   ' }, { reason: 42 }, undefined]) {
    const missing = await failureOf(application.cancelTrip(agent, other.tripId, body));
    expect(missing).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(missing.fieldViolations.map((violation) => violation.field)).toEqual(['reason']);
  }
  const notAnId = await settle(application.cancelTrip(agent, 'not-a-trip', { reason: 'Breakdown' }));
  expect(notAnId).toBe('VALIDATION_FAILED');
  expect(await settle(application.cancelTrip(customer, other.tripId, { reason: 'Breakdown' }))).toBe(
    'PERMISSION_DENIED',
  );
  // Nothing above marked the trip: it is still bookable, and it has no cancellation to read.
  expect(await settle(application.getTripCancellation(agent, other.tripId))).toBe('NOT_FOUND');
  const otherRow: { status: string } | undefined = await saga
    .database('trips')
    .where({ id: other.tripId })
    .first('status');
  expect(otherRow?.status).toBe('SCHEDULED');
});
