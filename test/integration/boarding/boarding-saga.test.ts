// Boarding against real PostgreSQL and Temporal: scans through the application, no-shows at the grace's end, the manifest.
import { expect } from '@jest/globals';
import { createBoardingApplication, type BoardingApplication } from '../../../src/application/boarding';
import type { BookingView } from '../../../src/application/interface';
import type { Actor } from '../../../src/domain/actor';
import { notificationsOf, paymentLedger } from '../../support/booking-records';
import {
  createTicketKeys,
  issueTestTicket,
  revokeTestTicket,
  type TicketKeys,
} from '../../support/boarding-tickets';
import { domainErrorOf, eventually } from '../../support/outcomes';
import { useSagaTestBed } from '../../support/saga';
import { bookingRequest, createTrip, standardPriceMinor, type TestTrip } from '../../support/trips';

jest.setTimeout(60_000);

/** Seconds, so a no-show is recorded within the test: the bus waits this long past its departure. */
const graceMs = 3000;

const testBed = useSagaTestBed(
  { seatCount: 16 },
  {
    timings: { noShowGraceMs: graceMs },
    environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100' },
  },
);

let keys: TicketKeys;
let boarding: BoardingApplication;
const driver: Actor = {
  userId: '00000000-0000-4000-8000-00000000d71e',
  roles: ['driver'],
  scopes: ['boarding:write', 'trips:read'],
};

beforeAll(async () => {
  keys = await createTicketKeys();
  boarding = createBoardingApplication({
    database: testBed.saga.database,
    temporal: testBed.saga.client,
    cipher: testBed.saga.cipher,
    ticketKeys: () => Promise.resolve(keys.jwks),
  });
});

/**
 * A confirmed booking of two on the shortest trip a route can have (one minute from the origin to the
 * destination), leaving seconds after it is made, its first passenger boarded: started before the other tests, so
 * that the grace and the minute to its arrival pass while they run rather than after them. Its test reads the
 * outcome.
 */
let departingBooking: Promise<{ soon: TestTrip; booking: BookingView }>;

beforeAll(() => {
  departingBooking = (async () => {
    const soon = await createTrip(testBed.saga.database, {
      seatCount: 4,
      departureInMs: 8000,
      durationMinutes: 1,
    });
    const booking = await confirmedBooking(soon, ['1A', '1B']);
    const { token } = await issueTestTicket(testBed.saga.database, keys, booking, 0);
    await boarding.recordBoarding(driver, soon.tripId, { ticket: token, stop: soon.stopCodes[0] });
    return { soon, booking };
  })();
  // Its test reports a failure; until then it must not count as unhandled.
  departingBooking.catch(() => undefined);
});

async function boardingStatusOf(passengerId: string): Promise<string | undefined> {
  const row: { boarding_status: string } | undefined = await testBed.saga
    .database('passengers')
    .where({ id: passengerId })
    .first('boarding_status');
  return row?.boarding_status;
}

async function confirmedBooking(trip: TestTrip, seats: string[]): Promise<BookingView> {
  const { application } = testBed.saga;
  const pending = await application.createBooking(testBed.customer, bookingRequest(trip, seats));
  return application.confirmPayment(testBed.customer, pending.id, { paymentToken: 'tok_visa' });
}

test('A scan boards the passenger; a second scan is ALREADY_BOARDED naming when and where', async () => {
  const booking = await confirmedBooking(testBed.trip, ['2A']);
  const { token } = await issueTestTicket(testBed.saga.database, keys, booking, 0);
  const stop = testBed.trip.stopCodes[0];

  const boarded = await boarding.recordBoarding(driver, testBed.trip.tripId, {
    ticket: token,
    stop,
    deviceId: 'bus-17',
  });
  expect(boarded).toMatchObject({
    bookingId: booking.id,
    passengerId: booking.passengers[0].id,
    seatNumber: '2A',
    stop,
  });

  const second = await domainErrorOf(
    boarding.recordBoarding(driver, testBed.trip.tripId, { ticket: token, stop }),
  );
  expect(second?.code).toBe('ALREADY_BOARDED');
  expect(second?.mapping.httpStatus).toBe(409);
  expect(second?.details).toEqual({
    passengerId: booking.passengers[0].id,
    boardedAt: boarded.boardedAt,
    stop,
  });
  expect(second?.message).toBe(`The passenger already boarded at ${stop} at ${boarded.boardedAt}`);

  const row: Record<string, unknown> | undefined = await testBed.saga
    .database('passengers')
    .where({ id: booking.passengers[0].id })
    .first('boarding_status', 'boarded_stop', 'boarded_by', 'boarded_device');
  expect(row).toEqual({
    boarding_status: 'BOARDED',
    boarded_stop: stop,
    boarded_by: driver.userId,
    boarded_device: 'bus-17',
  });
});

test('A revoked ticket is refused with TICKET_REVOKED and boards no one', async () => {
  const booking = await confirmedBooking(testBed.trip, ['2B']);
  const { token, ticketId } = await issueTestTicket(testBed.saga.database, keys, booking, 0);
  await revokeTestTicket(testBed.saga.database, ticketId);

  const refusal = await domainErrorOf(
    boarding.recordBoarding(driver, testBed.trip.tripId, { ticket: token, stop: testBed.trip.stopCodes[0] }),
  );

  expect(refusal?.code).toBe('TICKET_REVOKED');
  expect(refusal?.details).toMatchObject({ ticketId, revokedReason: 'SEAT_CHANGED' });
  expect(await boardingStatusOf(booking.passengers[0].id)).toBe('EXPECTED');
});

test('Forged, truncated, foreign-key, other-trip, other-stop tickets and unknown trips each get a clear error', async () => {
  const booking = await confirmedBooking(testBed.trip, ['2C']);
  const stop = testBed.trip.stopCodes[0];
  const { token } = await issueTestTicket(testBed.saga.database, keys, booking, 0);
  const scan = (ticket: string, options: { stop?: string; tripId?: string } = {}) =>
    domainErrorOf(
      boarding.recordBoarding(driver, options.tripId ?? testBed.trip.tripId, {
        ticket,
        stop: options.stop ?? stop,
      }),
    );

  const [header, payload, signature] = token.split('.');
  const otherPayload = Buffer.from(
    JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), seat: '1A' }),
  ).toString('base64url');
  const forged = await scan(`${header}.${otherPayload}.${signature}`);
  expect(forged?.code).toBe('TICKET_INVALID');
  expect(forged?.details).toEqual({ reason: 'signature' });

  const truncated = await scan(token.slice(0, token.length - 20));
  expect(truncated?.code).toBe('TICKET_INVALID');
  expect(truncated?.mapping.httpStatus).toBe(422);

  const strangerKeys = await createTicketKeys();
  const foreign = await issueTestTicket(testBed.saga.database, strangerKeys, booking, 0, { store: false });
  expect((await scan(foreign.token))?.details).toEqual({ reason: 'unknown_key' });

  const otherTrip = await createTrip(testBed.saga.database, { seatCount: 4 });
  const wrongTrip = await scan(token, { tripId: otherTrip.tripId, stop: otherTrip.stopCodes[0] });
  expect(wrongTrip?.code).toBe('VALIDATION_FAILED');
  expect(wrongTrip?.fieldViolations).toEqual([
    { field: 'ticket', message: `is a ticket for trip ${testBed.trip.tripId}, not this trip` },
  ]);

  const wrongStop = await scan(token, { stop: testBed.trip.stopCodes[1] });
  expect(wrongStop?.code).toBe('VALIDATION_FAILED');
  expect(wrongStop?.fieldViolations).toEqual([
    { field: 'stop', message: `the ticket boards at ${stop}, not at ${testBed.trip.stopCodes[1]}` },
  ]);

  const unknownTrip = await scan(token, { tripId: '00000000-0000-4000-8000-000000000404' });
  expect(unknownTrip?.code).toBe('NOT_FOUND');
  expect(unknownTrip?.message).toBe('Trip 00000000-0000-4000-8000-000000000404 was not found');

  expect(await boardingStatusOf(booking.passengers[0].id)).toBe('EXPECTED');
});

test('A cancelled booking boards no one, and the manifest shows its passengers cancelled', async () => {
  const booking = await confirmedBooking(testBed.trip, ['3A']);
  const { token } = await issueTestTicket(testBed.saga.database, keys, booking, 0);
  await testBed.saga.application.cancelBooking(testBed.customer, booking.id, {});

  // The cancellation revokes the booking's tickets; the scan is refused before it reaches the booking.
  const refusal = await eventually(
    () =>
      domainErrorOf(
        boarding.recordBoarding(driver, testBed.trip.tripId, {
          ticket: token,
          stop: testBed.trip.stopCodes[0],
        }),
      ),
    (error) => error?.code === 'TICKET_REVOKED',
  );
  expect(refusal?.details).toMatchObject({ revokedReason: 'BOOKING_CANCELLED' });
  expect(await boardingStatusOf(booking.passengers[0].id)).toBe('CANCELLED');

  const manifest = await boarding.tripManifest(driver, testBed.trip.tripId, { pageSize: 100 });
  expect(manifest.items.find((entry) => entry.bookingId === booking.id)?.status).toBe('CANCELLED');
});

test('At the departure plus the grace period the passenger not aboard is a no-show; the booking still completes', async () => {
  const { soon, booking } = await departingBooking;
  const [aboard, missing] = booking.passengers;

  const expectedNoShowAt = soon.departureTime.getTime() + graceMs;
  const statuses = await eventually(
    () => boarding.tripManifest(driver, soon.tripId, {}),
    (page) => page.items.some((entry) => entry.status === 'NO_SHOW'),
    { timeoutMs: 30_000 },
  );
  expect(Date.now()).toBeGreaterThanOrEqual(expectedNoShowAt);
  expect(statuses.items.map((entry) => [entry.seatNumber, entry.firstName, entry.status])).toEqual([
    ['1A', aboard.firstName, 'BOARDED'],
    ['1B', missing.firstName, 'NO_SHOW'],
  ]);
  expect(statuses.items[0]).toMatchObject({
    boardingStop: soon.stopCodes[0],
    boardedStop: soon.stopCodes[0],
  });

  // The standard rule gives a no-show nothing back: no refund ran, and the passenger is told.
  expect(await paymentLedger(testBed.saga.database, booking.id)).toMatchObject({
    charges: [2 * standardPriceMinor],
    refunds: [],
  });
  await eventually(
    () => notificationsOf(testBed.saga.database, booking.id),
    (sent) => sent.includes('EMAIL:booking-no-show'),
  );

  const completed = await eventually(
    () => testBed.saga.application.getBooking(testBed.customer, booking.id),
    (view) => view.status === 'COMPLETED',
    { timeoutMs: 90_000 },
  );
  expect(completed.amountPaid.amountMinor).toBe(2 * standardPriceMinor);
  const result = (await testBed.saga.client.workflow.getHandle(`booking-${booking.id}`).result()) as {
    booking: { boardings: { passengerId: string }[]; noShowsRecordedAt?: string };
  };
  expect(result.booking.boardings.map((entry) => entry.passengerId)).toEqual([aboard.id]);
  expect(Date.parse(result.booking.noShowsRecordedAt ?? '')).toBeGreaterThanOrEqual(expectedNoShowAt);
}, 150_000);
