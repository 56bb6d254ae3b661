// Invariant 1 under load: 100 concurrent creates for the same 10 seats hold each seat for exactly one booking.
import type { BookingView } from '../../../src/application/interface';
import type { Actor } from '../../../src/domain/actor';
import { findDomainError } from '../../../src/domain/errors';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';
import { doublyHeldSeats, seatHolders } from '../../support/booking-records';
import { eventually } from '../../support/outcomes';

/** Two shared cores serve 100 workflows and their activities: generous, since only the outcome is asserted. */
jest.setTimeout(180_000);

const contestedSeatCount = 10;
const requestsPerSeat = 10;
const customerCount = 10;

let saga: SagaEnvironment;
let trip: TestTrip;
let customers: Actor[];

beforeAll(async () => {
  // Each customer asks for every contested seat, so the per-customer cap on open holds must not interfere.
  saga = await startSagaEnvironment({
    environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: String(contestedSeatCount * requestsPerSeat) },
  });
  trip = await createTrip(saga.database, { seatCount: 16 });
  customers = await Promise.all(
    Array.from({ length: customerCount }, () => createCustomer(saga.database, saga.cipher)),
  );
});

afterAll(async () => {
  await saga?.stop();
});

/**
 * The create's outcome as its caller learns it: the booking, or the error code. A create still holding its
 * seats when its answer fell due (BOOKING_PROCESSING) is followed to its outcome by id, as a client would.
 */
async function outcomeOf(customer: Actor, creation: Promise<BookingView>): Promise<BookingView | string> {
  const stillProcessing = (answer: unknown) => findDomainError(answer)?.code === 'BOOKING_PROCESSING';
  let answer = await creation.catch((error: unknown) => findDomainError(error) ?? error);
  if (stillProcessing(answer)) {
    const bookingId = findDomainError(answer)?.details.bookingId;
    if (typeof bookingId !== 'string') throw new Error('BOOKING_PROCESSING names no booking id');
    answer = await eventually(
      () =>
        saga.application
          .getBooking(customer, bookingId)
          .catch((error: unknown) => findDomainError(error) ?? error),
      (read) => !stillProcessing(read),
      { timeoutMs: 120_000 },
    );
  }
  return findDomainError(answer)?.code ?? (answer as BookingView);
}

test('100 concurrent creates for 10 seats: 10 PENDING_PAYMENT, 90 SEAT_UNAVAILABLE, no seat held twice', async () => {
  const contestedSeats = trip.seatNumbers.slice(0, contestedSeatCount);
  const requests = contestedSeats.flatMap((seatNumber) =>
    customers.slice(0, requestsPerSeat).map((customer) => ({ customer, seatNumber })),
  );
  const startedAt = Date.now();

  const outcomes = await Promise.all(
    requests.map(async ({ customer, seatNumber }) => {
      const outcome = await outcomeOf(
        customer,
        saga.application.createBooking(customer, bookingRequest(trip, [seatNumber])),
      );
      const booking = typeof outcome === 'string' ? undefined : outcome;
      return {
        seatNumber,
        customerId: customer.userId,
        booking,
        code: typeof outcome === 'string' ? outcome : outcome.status,
      };
    }),
  );
  process.stdout.write(
    `race: ${requests.length} concurrent creates settled in ${Date.now() - startedAt} ms\n`,
  );

  const codes = outcomes.map((outcome) => outcome.code);
  expect(codes.filter((code) => code === 'PENDING_PAYMENT')).toHaveLength(contestedSeatCount);
  expect(codes.filter((code) => code === 'SEAT_UNAVAILABLE')).toHaveLength(
    contestedSeatCount * (requestsPerSeat - 1),
  );

  // Exactly one winner per seat, and the seat inventory agrees with the answers the callers got.
  const winners = outcomes.filter((outcome) => outcome.booking !== undefined);
  expect(winners.map((winner) => winner.seatNumber).sort()).toEqual([...contestedSeats].sort());
  expect(await seatHolders(saga.database, trip.tripId)).toEqual(
    Object.fromEntries(winners.map((winner) => [winner.seatNumber, winner.booking?.id])),
  );
  expect(await doublyHeldSeats(saga.database, trip.tripId)).toEqual([]);
  const activeAllocations: { state: string }[] = await saga
    .database('seat_allocations')
    .where({ trip_id: trip.tripId })
    .whereIn('state', ['HELD', 'BOOKED'])
    .select('state');
  expect(activeAllocations).toHaveLength(contestedSeatCount);
  expect(activeAllocations.every((allocation) => allocation.state === 'HELD')).toBe(true);

  // The read model has the winners only: a losing request never became a booking.
  const bookingRows: { id: string; status: string; customer_id: string }[] = await saga
    .database('bookings')
    .where({ trip_id: trip.tripId })
    .select('id', 'status', 'customer_id');
  expect(bookingRows.map((row) => row.id).sort()).toEqual(
    winners.map((winner) => winner.booking?.id as string).sort(),
  );
  expect(bookingRows.every((row) => row.status === 'PENDING_PAYMENT')).toBe(true);
  for (const winner of winners) {
    expect(bookingRows.find((row) => row.id === winner.booking?.id)?.customer_id).toBe(winner.customerId);
  }
});
