// UpdateBooking and the Workflow Update machinery: taken seats, price differences, versions, validators, serialization.
import { expect } from '@jest/globals';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { findDomainError } from '../../../src/domain/errors';
import { confirmPaymentUpdate, updateBookingUpdate } from '../../../src/workflows/shared';
import { useSagaTestBed } from '../../support/saga';
import { activeSeatsOf, doublyHeldSeats, paymentLedger, seatHolders } from '../../support/booking-records';
import { bookingRequest, premiumPriceMinor, standardPriceMinor } from '../../support/trips';
import { domainErrorOf, errorCodeOf } from '../../support/outcomes';

jest.setTimeout(60_000);

const testBed = useSagaTestBed({ seatCount: 40, premiumRows: 2 });

const companion = (seatNumber: string) => ({
  firstName: 'Rui',
  lastName: 'Costa',
  email: 'rui@example.com',
  seatNumber,
  fareClass: 'STANDARD',
});

async function updateAcceptedEvents(bookingId: string): Promise<number> {
  const history = await testBed.saga.client.workflow.getHandle(`booking-${bookingId}`).fetchHistory();
  return (history.events ?? []).filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes)
    .length;
}

test('changing to a taken seat answers SEAT_UNAVAILABLE and keeps the old seat held', async () => {
  const other = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['3A']),
  );
  const mine = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['3B']),
  );

  const code = await errorCodeOf(
    testBed.saga.application.updateBooking(testBed.customer, mine.id, {
      seatChanges: [{ passengerId: mine.passengers[0].id, seatNumber: '3A' }],
    }),
  );

  expect(code).toBe('SEAT_UNAVAILABLE');
  expect(await activeSeatsOf(testBed.saga.database, mine.id)).toEqual(['3B:HELD']);
  expect(await activeSeatsOf(testBed.saga.database, other.id)).toEqual(['3A:HELD']);
  expect(await testBed.saga.application.getBooking(testBed.customer, mine.id)).toEqual(mine);
});

test('adding a passenger to a confirmed booking charges the difference exactly once', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['4A']),
  );
  await testBed.saga.application.confirmPayment(testBed.customer, pending.id, {
    paymentToken: 'tok_timeoutOnce',
  });

  const grown = await testBed.saga.application.updateBooking(testBed.customer, pending.id, {
    addPassengers: [companion('4B')],
  });

  expect(grown).toMatchObject({ status: 'CONFIRMED', amountPaid: { amountMinor: 2 * standardPriceMinor } });
  expect(await paymentLedger(testBed.saga.database, pending.id)).toMatchObject({
    charges: [standardPriceMinor, standardPriceMinor],
    refunds: [],
  });
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual(['4A:BOOKED', '4B:BOOKED']);
});

test('a confirmed seat change to another fare class charges up, then refunds down, the difference', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['5A']),
  );
  await testBed.saga.application.confirmPayment(testBed.customer, pending.id, { paymentToken: 'tok_visa' });
  const passengerId = pending.passengers[0].id;
  const difference = premiumPriceMinor - standardPriceMinor;

  const upgraded = await testBed.saga.application.updateBooking(testBed.customer, pending.id, {
    seatChanges: [{ passengerId, seatNumber: '1A', fareClass: 'PREMIUM' }],
  });
  expect(upgraded).toMatchObject({ price: { total: { amountMinor: premiumPriceMinor } } });
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual(['1A:BOOKED']);

  const downgraded = await testBed.saga.application.updateBooking(testBed.customer, pending.id, {
    seatChanges: [{ passengerId, seatNumber: '5C', fareClass: 'STANDARD' }],
  });

  expect(downgraded).toMatchObject({
    price: { total: { amountMinor: standardPriceMinor } },
    amountPaid: { amountMinor: premiumPriceMinor },
    amountRefunded: { amountMinor: difference },
    payment: { status: 'PARTIALLY_REFUNDED' },
  });
  expect(await paymentLedger(testBed.saga.database, pending.id)).toMatchObject({
    charges: [standardPriceMinor, difference],
    refunds: [difference],
  });
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual(['5C:BOOKED']);
});

test('a seat outside the layout, or of another fare class, is refused before anything is held', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['6A']),
  );
  const passengerId = pending.passengers[0].id;
  const acceptedBefore = await updateAcceptedEvents(pending.id);

  const wrongClass = await domainErrorOf(
    testBed.saga.application.updateBooking(testBed.customer, pending.id, {
      seatChanges: [{ passengerId, seatNumber: '2A', fareClass: 'STANDARD' }],
    }),
  );
  const missingSeat = await domainErrorOf(
    testBed.saga.application.updateBooking(testBed.customer, pending.id, {
      addPassengers: [companion('20A')],
    }),
  );

  expect(wrongClass?.fieldViolations).toEqual([
    { field: 'seat_changes[0].seat_number', message: expect.stringContaining('PREMIUM') },
  ]);
  expect(missingSeat?.fieldViolations).toEqual([
    { field: 'add_passengers[0].seat_number', message: 'seat 20A does not exist on this bus' },
  ]);
  expect(await updateAcceptedEvents(pending.id)).toBe(acceptedBefore);
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual(['6A:HELD']);
});

test('a stale expected version answers VERSION_MISMATCH and changes nothing', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['6C']),
  );
  await testBed.saga.application.updateBooking(testBed.customer, pending.id, {
    passengerUpdates: [{ passengerId: pending.passengers[0].id, firstName: 'Maria' }],
  });

  const stale = await domainErrorOf(
    testBed.saga.application.updateBooking(
      testBed.customer,
      pending.id,
      { passengerUpdates: [{ passengerId: pending.passengers[0].id, firstName: 'Joana' }] },
      { expectedVersion: 1 },
    ),
  );

  expect(stale?.code).toBe('VERSION_MISMATCH');
  expect(stale?.details).toEqual({ expectedVersion: 1, currentVersion: 2 });
  expect(
    (await testBed.saga.application.getBooking(testBed.customer, pending.id)).passengers[0].firstName,
  ).toBe('Maria');
});

test('a validator rejects what the state forbids, so nothing lands in history', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['7A']),
  );
  await testBed.saga.application.confirmPayment(testBed.customer, pending.id, { paymentToken: 'tok_visa' });
  const handle = testBed.saga.client.workflow.getHandle(`booking-${pending.id}`);
  const acceptedBefore = await updateAcceptedEvents(pending.id);

  const rejection = await handle
    .executeUpdate(confirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] })
    .catch((error: unknown) => error);

  expect(rejection).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(findDomainError(rejection)?.code).toBe('BOOKING_STATE_CONFLICT');
  expect(await updateAcceptedEvents(pending.id)).toBe(acceptedBefore);
  expect(await paymentLedger(testBed.saga.database, pending.id)).toMatchObject({
    charges: [standardPriceMinor],
  });
});

test('concurrent updates run one at a time: every change applies, each on its own version', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['8A']),
  );
  await testBed.saga.application.confirmPayment(testBed.customer, pending.id, { paymentToken: 'tok_visa' });
  const handle = testBed.saga.client.workflow.getHandle(`booking-${pending.id}`);

  const results = await Promise.all(
    ['8B', '8C', '8D'].map((seatNumber) =>
      handle.executeUpdate(updateBookingUpdate, {
        args: [{ changes: { addPassengers: [companion(seatNumber)] } }],
      }),
    ),
  );

  expect(results.map((result) => result.version).sort()).toEqual([3, 4, 5]);
  const final = await testBed.saga.application.getBooking(testBed.customer, pending.id);
  expect(final).toMatchObject({ version: 5, amountPaid: { amountMinor: 4 * standardPriceMinor } });
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual([
    '8A:BOOKED',
    '8B:BOOKED',
    '8C:BOOKED',
    '8D:BOOKED',
  ]);
  expect((await paymentLedger(testBed.saga.database, pending.id)).charges).toHaveLength(4);
});

test('payment racing a cancellation: whichever runs first wins, and the ledger matches the outcome', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['9A']),
  );

  const [payment, cancellation] = await Promise.allSettled([
    testBed.saga.application.confirmPayment(testBed.customer, pending.id, { paymentToken: 'tok_visa' }),
    testBed.saga.application.cancelBooking(testBed.customer, pending.id, { reason: 'Changed my mind' }),
  ]);

  const final = await testBed.saga.application.getBooking(testBed.customer, pending.id);
  expect(final.status).toBe('CANCELLED');
  expect(cancellation.status).toBe('fulfilled');
  const ledger = await paymentLedger(testBed.saga.database, pending.id);
  expect(ledger.capturedMinor - ledger.refundedMinor).toBe(0);
  expect(ledger.charges).toHaveLength(payment.status === 'fulfilled' ? 1 : 0);
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual([]);
  expect(await doublyHeldSeats(testBed.saga.database, testBed.trip.tripId)).toEqual([]);
  expect((await seatHolders(testBed.saga.database, testBed.trip.tripId))['9A']).toBeUndefined();
});
