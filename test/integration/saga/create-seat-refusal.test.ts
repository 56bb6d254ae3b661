// A create for a seat that is taken, or that another create is reserving, is refused before any workflow starts:
// a burst for a few seats starts a workflow per seat, not per request, and every refused create answers at once.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { createSeatActivities } from '../../../src/activities/seats';
import { activityKey } from '../../../src/domain/ids';
import type { Actor } from '../../../src/domain/actor';
import { bookingWorkflowId } from '../../../src/workflows/shared';
import { bookingSnapshot, testPassenger } from '../../support/activities';
import { domainErrorOf, eventually } from '../../support/outcomes';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';

jest.setTimeout(120_000);

let saga: SagaEnvironment;
let trip: TestTrip;
let nextSeat = 0;

beforeAll(async () => {
  // No worker polls until a test starts them: a started create cannot hold its seats, as in a burst.
  saga = await startSagaEnvironment({ startWorkers: false });
  trip = await createTrip(saga.database, { seatCount: 24 });
});

afterAll(async () => {
  await saga?.stop();
});

function freshSeat(): string {
  nextSeat += 1;
  return trip.seatNumbers[nextSeat];
}

async function workflowExists(bookingId: string): Promise<boolean> {
  try {
    await saga.client.workflow.getHandle(bookingWorkflowId(bookingId)).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

async function claimOf(bookingId: string) {
  return saga
    .database('booking_hold_claims')
    .where({ booking_id: bookingId })
    .first<{ state: string } | undefined>('state');
}

async function heldBooking(customer: Actor, seat: string): Promise<string> {
  await saga.startWorkers();
  const booking = await saga.application.createBooking(customer, bookingRequest(trip, [seat]));
  expect(booking.status).toBe('PENDING_PAYMENT');
  return booking.id;
}

test('concurrent creates of different customers for one seat start one workflow; the others are refused SEAT_UNAVAILABLE at once', async () => {
  await saga.stopWorkers();
  const seat = freshSeat();
  const customers = await Promise.all(
    Array.from({ length: 6 }, () => createCustomer(saga.database, saga.cipher)),
  );
  const bookingIds = customers.map(() => randomUUID());
  // A short answer time: the create that goes on answers BOOKING_PROCESSING, its workflow waiting for a worker.
  const application = saga.applicationWith({ BOOKING_CREATE_ANSWER_TIMEOUT_MS: '3000' });

  const answers = await Promise.all(
    customers.map((customer, index) =>
      domainErrorOf(
        application.createBooking(customer, bookingRequest(trip, [seat]), { bookingId: bookingIds[index] }),
      ),
    ),
  );

  const codes = answers.map((answer) => answer?.code ?? 'created');
  expect(codes.filter((code) => code === 'BOOKING_PROCESSING')).toHaveLength(1);
  expect(codes.filter((code) => code === 'SEAT_UNAVAILABLE')).toHaveLength(customers.length - 1);
  for (const refusal of answers.filter((answer) => answer?.code === 'SEAT_UNAVAILABLE')) {
    expect(refusal?.details).toEqual({ seatNumbers: [seat] });
  }
  const started = await Promise.all(bookingIds.map(workflowExists));
  expect(started.filter(Boolean)).toHaveLength(1);
  // The refused creates took no slot of their customers' caps either.
  const refusedIds = bookingIds.filter((_, index) => answers[index]?.code === 'SEAT_UNAVAILABLE');
  for (const bookingId of refusedIds) expect((await claimOf(bookingId))?.state).toBe('REFUSED');

  // The one that went on holds the seat once a worker polls.
  await saga.startWorkers();
  const winner = bookingIds[codes.indexOf('BOOKING_PROCESSING')];
  const held = await eventually(
    () => saga.database('bookings').where({ id: winner }).first<{ status: string } | undefined>('status'),
    (row) => row !== undefined,
  );
  expect(held?.status).toBe('PENDING_PAYMENT');
});

test('a create for a seat another booking holds is refused SEAT_UNAVAILABLE without starting a workflow or taking a slot', async () => {
  const seat = freshSeat();
  await heldBooking(await createCustomer(saga.database, saga.cipher), seat);
  const other = await createCustomer(saga.database, saga.cipher);
  const bookingId = randomUUID();

  const refusal = await domainErrorOf(
    saga.application.createBooking(other, bookingRequest(trip, [seat, freshSeat()]), { bookingId }),
  );

  expect(refusal?.code).toBe('SEAT_UNAVAILABLE');
  // The seat another booking holds, and the legs both would share.
  expect(refusal?.details).toEqual({
    seatNumbers: [seat],
    overlappingLegs: [expect.stringContaining(`${seat} `)],
  });
  expect(await workflowExists(bookingId)).toBe(false);
  // Remembered under the id it named (another body under it is refused), without taking a slot.
  expect((await claimOf(bookingId))?.state).toBe('REFUSED');
});

test('a retry of a create refused early books the seat once it is free, and then counts against the cap', async () => {
  const seat = freshSeat();
  const holder = await createCustomer(saga.database, saga.cipher);
  const firstId = await heldBooking(holder, seat);
  const customer = await createCustomer(saga.database, saga.cipher);
  const request = bookingRequest(trip, [seat]);
  const bookingId = randomUUID();
  expect((await domainErrorOf(saga.application.createBooking(customer, request, { bookingId })))?.code).toBe(
    'SEAT_UNAVAILABLE',
  );
  await saga.application.cancelBooking(holder, firstId, {});

  const booked = await saga.application.createBooking(customer, request, { bookingId });

  expect(booked).toMatchObject({ id: bookingId, status: 'PENDING_PAYMENT' });
  expect((await claimOf(bookingId))?.state).toBe('CLAIMED');
});

test('a retry of a create whose booking holds the seat answers that booking, not SEAT_UNAVAILABLE', async () => {
  await saga.startWorkers();
  const customer = await createCustomer(saga.database, saga.cipher);
  const request = bookingRequest(trip, [freshSeat()]);
  const bookingId = randomUUID();
  const first = await saga.application.createBooking(customer, request, { bookingId });

  const retried = await saga.application.createBooking(customer, request, { bookingId });

  expect(retried).toMatchObject({ id: first.id, status: 'PENDING_PAYMENT' });
});

test('a seat whose hold lapsed past the grace period is not refused early: the create releases that hold and books it', async () => {
  await saga.startWorkers();
  const seat = freshSeat();
  // A hold left behind by a booking no workflow looks after any more, expired longer ago than the grace period.
  const owner = await createCustomer(saga.database, saga.cipher);
  const abandoned = bookingSnapshot({ ...trip, customerId: owner.userId }, [testPassenger(seat)], {
    holdExpiresAt: new Date(
      Date.now() - (saga.config.booking.lapsedHoldGraceSeconds + 60) * 1000,
    ).toISOString(),
  });
  await createSeatActivities({
    database: saga.database,
    cipher: saga.cipher,
    lapsedHoldGraceSeconds: saga.config.booking.lapsedHoldGraceSeconds,
  }).ReserveSeats({
    bookingId: abandoned.id,
    tripId: trip.tripId,
    seats: abandoned.passengers.map((passenger) => ({
      passengerId: passenger.id,
      seatNumber: passenger.seatNumber,
      fareClass: passenger.fareClass,
    })),
    holdExpiresAt: abandoned.holdExpiresAt,
    idempotencyKey: activityKey(abandoned.id, 'reserve-seats', abandoned.version),
    booking: abandoned,
  });

  const booking = await saga.application.createBooking(
    await createCustomer(saga.database, saga.cipher),
    bookingRequest(trip, [seat]),
  );

  expect(booking.status).toBe('PENDING_PAYMENT');
});
