// The booking application both fronts call: ownership, paging, request ids, the open-hold cap and error mapping.
import { expect } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { createBookingApplication } from '../../../src/application/bookings';
import type { BookingView } from '../../../src/application/interface';
import type { Actor } from '../../../src/domain/actor';
import { createBookingDataConverter } from '../../../src/security/temporal-payload-codec';
import { useSagaTestBed } from '../../support/saga';
import { activeSeatsOf, seatHolders } from '../../support/booking-records';
import { bookingRequest, createTrip, passengerFor } from '../../support/trips';
import { createCustomer } from '../../support/users';
import { domainErrorOf, errorCodeOf } from '../../support/outcomes';

jest.setTimeout(60_000);

const testBed = useSagaTestBed({ seatCount: 40 });

describe('ownership', () => {
  test("another customer's booking answers NOT_FOUND to every operation; an agent sees it", async () => {
    const booking = await testBed.saga.application.createBooking(
      testBed.customer,
      bookingRequest(testBed.trip, ['1A']),
    );
    const stranger = await createCustomer(testBed.saga.database, testBed.saga.cipher);
    const agent = await createCustomer(testBed.saga.database, testBed.saga.cipher, ['agent']);

    expect(await errorCodeOf(testBed.saga.application.getBooking(stranger, booking.id))).toBe('NOT_FOUND');
    expect(await errorCodeOf(testBed.saga.application.cancelBooking(stranger, booking.id, {}))).toBe(
      'NOT_FOUND',
    );
    expect(
      await errorCodeOf(
        testBed.saga.application.confirmPayment(stranger, booking.id, { paymentToken: 'tok_visa' }),
      ),
    ).toBe('NOT_FOUND');
    expect(
      await errorCodeOf(
        testBed.saga.application.updateBooking(stranger, booking.id, {
          passengerUpdates: [{ passengerId: booking.passengers[0].id, firstName: 'Mallory' }],
        }),
      ),
    ).toBe('NOT_FOUND');
    expect((await testBed.saga.application.listBookings(stranger, {})).items).toEqual([]);
    expect(await activeSeatsOf(testBed.saga.database, booking.id)).toEqual(['1A:HELD']);

    expect(await testBed.saga.application.getBooking(agent, booking.id)).toEqual(booking);
  });

  test('a malformed id is a validation error, an unknown one NOT_FOUND', async () => {
    expect(await errorCodeOf(testBed.saga.application.getBooking(testBed.customer, 'not-a-uuid'))).toBe(
      'VALIDATION_FAILED',
    );
    expect(await errorCodeOf(testBed.saga.application.getBooking(testBed.customer, randomUUID()))).toBe(
      'NOT_FOUND',
    );
  });
});

describe('listing', () => {
  test('pages newest first with opaque tokens tied to the filter', async () => {
    const lister = await createCustomer(testBed.saga.database, testBed.saga.cipher);
    const created: BookingView[] = [];
    for (const seat of ['2A', '2B', '2C', '2D', '3A']) {
      created.push(
        await testBed.saga.application.createBooking(lister, bookingRequest(testBed.trip, [seat])),
      );
    }
    await testBed.saga.application.cancelBooking(lister, created[1].id, {});
    const newestFirst = created.map((booking) => booking.id).reverse();

    const first = await testBed.saga.application.listBookings(lister, { pageSize: 2 });
    const second = await testBed.saga.application.listBookings(lister, {
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    const third = await testBed.saga.application.listBookings(lister, {
      pageSize: 2,
      pageToken: second.nextPageToken,
    });

    expect([...first.items, ...second.items, ...third.items].map((booking) => booking.id)).toEqual(
      newestFirst,
    );
    expect(third.nextPageToken).toBeUndefined();
    expect(first.items[0].passengers[0].firstName).toBe('Passenger1');

    const pending = await testBed.saga.application.listBookings(lister, { status: 'PENDING_PAYMENT' });
    expect(pending.items.map((booking) => booking.id)).toEqual(
      newestFirst.filter((id) => id !== created[1].id),
    );
    expect(pending.nextPageToken).toBeUndefined();

    expect(
      await errorCodeOf(
        testBed.saga.application.listBookings(lister, {
          status: 'CANCELLED',
          pageToken: first.nextPageToken,
        }),
      ),
    ).toBe('VALIDATION_FAILED');
    expect(await errorCodeOf(testBed.saga.application.listBookings(lister, { pageToken: 'garbage' }))).toBe(
      'VALIDATION_FAILED',
    );
    expect(await errorCodeOf(testBed.saga.application.listBookings(lister, { pageSize: -1 }))).toBe(
      'VALIDATION_FAILED',
    );
    expect(await errorCodeOf(testBed.saga.application.listBookings(lister, { pageSize: 101 }))).toBe(
      'VALIDATION_FAILED',
    );
    expect((await testBed.saga.application.listBookings(lister, { pageSize: 100 })).items).toHaveLength(5);
  });
});

describe('booking ids chosen by the front (its idempotency mechanism)', () => {
  test('a repeated create naming the same booking id returns that booking, even after it ended', async () => {
    const bookingId = randomUUID();
    const first = await testBed.saga.application.createBooking(
      testBed.customer,
      bookingRequest(testBed.trip, ['4A']),
      { bookingId },
    );
    const again = await testBed.saga.application.createBooking(
      testBed.customer,
      bookingRequest(testBed.trip, ['4A']),
      { bookingId },
    );
    expect(again).toEqual(first);

    await testBed.saga.application.cancelBooking(testBed.customer, first.id, {});
    await testBed.saga.client.workflow.getHandle(`booking-${first.id}`).result();
    const afterEnd = await testBed.saga.application.createBooking(
      testBed.customer,
      bookingRequest(testBed.trip, ['4A']),
      { bookingId },
    );

    expect(afterEnd).toMatchObject({ id: first.id, status: 'CANCELLED' });
    expect(await activeSeatsOf(testBed.saga.database, first.id)).toEqual([]);
  });

  test('a repeated create whose first attempt found the seat taken gets SEAT_UNAVAILABLE again', async () => {
    await testBed.saga.application.createBooking(testBed.customer, bookingRequest(testBed.trip, ['4B']));
    const bookingId = randomUUID();

    const firstCode = await errorCodeOf(
      testBed.saga.application.createBooking(testBed.customer, bookingRequest(testBed.trip, ['4B']), {
        bookingId,
      }),
    );
    const againCode = await errorCodeOf(
      testBed.saga.application.createBooking(testBed.customer, bookingRequest(testBed.trip, ['4B']), {
        bookingId,
      }),
    );

    expect([firstCode, againCode]).toEqual(['SEAT_UNAVAILABLE', 'SEAT_UNAVAILABLE']);
  });

  test('the same booking id with a different body answers IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const retrier = await createCustomer(testBed.saga.database, testBed.saga.cipher);
    const otherTrip = await createTrip(testBed.saga.database, { seatCount: 4 });
    const bookingId = randomUUID();
    const original = bookingRequest(testBed.trip, ['8A']);
    const first = await testBed.saga.application.createBooking(retrier, original, { bookingId });

    const reuses = [
      bookingRequest(testBed.trip, ['8B']),
      { ...original, contactEmail: 'someone.else@example.com' },
      {
        ...original,
        passengers: [passengerFor('8A', 'STANDARD', { firstName: 'Passenger1', lastName: 'Santos' })],
      },
      bookingRequest(otherTrip, ['1A']),
    ];
    for (const body of reuses) {
      expect(await errorCodeOf(testBed.saga.application.createBooking(retrier, body, { bookingId }))).toBe(
        'IDEMPOTENCY_KEY_REUSED',
      );
    }
    expect(await testBed.saga.application.createBooking(retrier, original, { bookingId })).toEqual(first);
    expect(await activeSeatsOf(testBed.saga.database, first.id)).toEqual(['8A:HELD']);
    expect(await seatHolders(testBed.saga.database, testBed.trip.tripId)).not.toHaveProperty('8B');
    expect(await seatHolders(testBed.saga.database, otherTrip.tripId)).toEqual({});

    await testBed.saga.application.cancelBooking(retrier, first.id, {});
    await testBed.saga.client.workflow.getHandle(`booking-${first.id}`).result();
    expect(await errorCodeOf(testBed.saga.application.createBooking(retrier, reuses[0], { bookingId }))).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(await testBed.saga.application.createBooking(retrier, original, { bookingId })).toMatchObject({
      id: first.id,
      status: 'CANCELLED',
    });
  });

  test('a booking id whose first create found the seat taken refuses a different body too', async () => {
    const retrier = await createCustomer(testBed.saga.database, testBed.saga.cipher);
    await testBed.saga.application.createBooking(testBed.customer, bookingRequest(testBed.trip, ['8C']));
    const bookingId = randomUUID();

    const firstCode = await errorCodeOf(
      testBed.saga.application.createBooking(retrier, bookingRequest(testBed.trip, ['8C']), { bookingId }),
    );
    const reuseCode = await errorCodeOf(
      testBed.saga.application.createBooking(retrier, bookingRequest(testBed.trip, ['8D']), { bookingId }),
    );

    expect([firstCode, reuseCode]).toEqual(['SEAT_UNAVAILABLE', 'IDEMPOTENCY_KEY_REUSED']);
    expect(await seatHolders(testBed.saga.database, testBed.trip.tripId)).not.toHaveProperty('8D');
  });
});

describe('creation rules', () => {
  test('a customer may keep only a configured number of unpaid holds', async () => {
    const capped = testBed.saga.applicationWith({ BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '2' });
    const holder = await createCustomer(testBed.saga.database, testBed.saga.cipher);
    const first = await capped.createBooking(holder, bookingRequest(testBed.trip, ['5A']));
    await capped.createBooking(holder, bookingRequest(testBed.trip, ['5B']));

    const refusal = await domainErrorOf(capped.createBooking(holder, bookingRequest(testBed.trip, ['5C'])));

    expect(refusal?.code).toBe('RATE_LIMITED');
    expect(refusal?.message).toContain('pay for or cancel one');
    expect(refusal?.details.retryAfterSeconds).toBeGreaterThan(0);
    expect(await activeSeatsOf(testBed.saga.database, first.id)).toEqual(['5A:HELD']);

    await capped.confirmPayment(holder, first.id, { paymentToken: 'tok_visa' });
    expect((await capped.createBooking(holder, bookingRequest(testBed.trip, ['5C']))).status).toBe(
      'PENDING_PAYMENT',
    );
  });

  test('unknown, departed and cancelled trips, and seats not on the bus, are refused with clear errors', async () => {
    const departed = await createTrip(testBed.saga.database, { seatCount: 4, departureInMs: -3_600_000 });
    const cancelled = await createTrip(testBed.saga.database, { seatCount: 4 });
    await testBed.saga.database('trips').where({ id: cancelled.tripId }).update({ status: 'CANCELLED' });

    const unknownTrip = await domainErrorOf(
      testBed.saga.application.createBooking(testBed.customer, {
        ...bookingRequest(testBed.trip, ['6A']),
        tripId: randomUUID(),
      }),
    );
    const departedTrip = await domainErrorOf(
      testBed.saga.application.createBooking(testBed.customer, bookingRequest(departed, ['1A'])),
    );
    const cancelledTrip = await domainErrorOf(
      testBed.saga.application.createBooking(testBed.customer, bookingRequest(cancelled, ['1A'])),
    );
    const missingSeat = await domainErrorOf(
      testBed.saga.application.createBooking(testBed.customer, bookingRequest(testBed.trip, ['30A'])),
    );

    expect(unknownTrip?.code).toBe('NOT_FOUND');
    expect(departedTrip?.code).toBe('VALIDATION_FAILED');
    expect(departedTrip?.fieldViolations[0]).toMatchObject({
      field: 'trip_id',
      message: expect.stringContaining('departed'),
    });
    expect(cancelledTrip?.fieldViolations[0]).toMatchObject({
      field: 'trip_id',
      message: 'the trip was cancelled',
    });
    expect(missingSeat?.fieldViolations[0]).toMatchObject({ field: 'passengers[0].seat_number' });
  });

  test('a fare class the trip does not sell is refused before any workflow starts', async () => {
    const booker = await createCustomer(testBed.saga.database, testBed.saga.cipher);
    const standardOnly = await createTrip(testBed.saga.database, { seatCount: 4, premiumRows: 1 });
    await testBed.saga
      .database('trip_fares')
      .where({ trip_id: standardOnly.tripId, fare_class: 'PREMIUM' })
      .delete();

    const refusal = await domainErrorOf(
      testBed.saga.application.createBooking(booker, {
        ...bookingRequest(standardOnly, ['1A']),
        passengers: [passengerFor('1A', 'PREMIUM')],
      }),
    );

    expect(refusal?.code).toBe('VALIDATION_FAILED');
    expect(refusal?.fieldViolations).toEqual([
      { field: 'passengers[0].fare_class', message: 'fare class PREMIUM is not sold on this trip' },
    ]);
    // The open-hold slot is claimed just before the workflow starts: nothing got that far.
    expect(await testBed.saga.database('booking_hold_claims').where({ customer_id: booker.userId })).toEqual(
      [],
    );
  });

  test('a token whose subject has no customer account cannot book', async () => {
    const outsider: Actor = { userId: randomUUID(), roles: ['customer'], scopes: ['bookings:write'] };
    expect(
      await errorCodeOf(
        testBed.saga.application.createBooking(outsider, bookingRequest(testBed.trip, ['6B'])),
      ),
    ).toBe('PERMISSION_DENIED');
  });
});

test('commands answer UNAVAILABLE when Temporal cannot be reached', async () => {
  const booking = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['7A']),
  );
  const deadConnection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [], connectTimeout: 500 });
  const offline = createBookingApplication({
    config: testBed.saga.config,
    database: testBed.saga.database,
    temporal: new Client({
      connection: deadConnection,
      dataConverter: createBookingDataConverter(testBed.saga.config),
    }),
    cipher: testBed.saga.cipher,
    taskQueues: testBed.saga.taskQueueNames,
  });

  const createFailure = await domainErrorOf(
    offline.createBooking(testBed.customer, bookingRequest(testBed.trip, ['7B'])),
  );
  const confirmCode = await errorCodeOf(
    offline.confirmPayment(testBed.customer, booking.id, { paymentToken: 'tok_visa' }),
  );

  expect(createFailure?.code).toBe('UNAVAILABLE');
  expect(confirmCode).toBe('UNAVAILABLE');
  expect((await offline.getBooking(testBed.customer, booking.id)).status).toBe('PENDING_PAYMENT');
  await deadConnection.close();
});
