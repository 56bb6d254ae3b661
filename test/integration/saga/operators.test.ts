// What operators do in Temporal: find bookings by search attributes, and cancel a workflow without leaking seats or money.
import { expect } from '@jest/globals';
import { WorkflowFailedError } from '@temporalio/client';
import { useSagaTestBed } from '../../support/saga';
import { activeSeatsOf, paymentLedger } from '../../support/booking-records';
import { bookingRequest, standardPriceMinor } from '../../support/trips';
import { eventually } from '../../support/outcomes';

jest.setTimeout(60_000);

const testBed = useSagaTestBed({ seatCount: 8 });

async function workflowIds(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of testBed.saga.client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}

test("workflow list with BookingStatus='CONFIRMED' finds the confirmed bookings of a trip", async () => {
  const confirmed = [];
  for (const seat of ['1A', '1B']) {
    const booking = await testBed.saga.application.createBooking(
      testBed.customer,
      bookingRequest(testBed.trip, [seat]),
    );
    confirmed.push(
      await testBed.saga.application.confirmPayment(testBed.customer, booking.id, {
        paymentToken: 'tok_visa',
      }),
    );
  }
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['1C']),
  );
  const expected = confirmed.map((booking) => `booking-${booking.id}`).sort();

  // Visibility is eventually consistent: poll, with a bound.
  const found = await eventually(
    () => workflowIds(`BookingStatus='CONFIRMED' AND TripId='${testBed.trip.tripId}'`),
    (ids) => ids.length >= expected.length,
  );

  expect(found).toEqual(expected);
  const pendingIds = await eventually(
    () => workflowIds(`BookingStatus='PENDING_PAYMENT' AND TripId='${testBed.trip.tripId}'`),
    (ids) => ids.length >= 1,
  );
  expect(pendingIds).toEqual([`booking-${pending.id}`]);

  const description = await testBed.saga.client.workflow.getHandle(`booking-${confirmed[0].id}`).describe();
  const attributes = Object.fromEntries(
    description.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
  );
  expect(attributes).toMatchObject({
    BookingStatus: 'CONFIRMED',
    CustomerId: testBed.customer.userId,
    TripId: testBed.trip.tripId,
    RouteId: testBed.trip.routeId,
    DepartureTime: testBed.trip.departureTime,
  });
  expect(await description.staticSummary()).toContain('1A');
});

test('an operator cancelling the workflow refunds in full, releases the seats and records CANCELLED', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['2A', '2B']),
  );
  await testBed.saga.application.confirmPayment(testBed.customer, pending.id, { paymentToken: 'tok_visa' });
  const handle = testBed.saga.client.workflow.getHandle(`booking-${pending.id}`);

  await handle.cancel();
  const outcome: unknown = await handle.result().catch((error: unknown) => error);

  expect(outcome).toBeInstanceOf(WorkflowFailedError);
  const booking = await testBed.saga.application.getBooking(testBed.customer, pending.id);
  expect(booking).toMatchObject({
    status: 'CANCELLED',
    amountRefunded: { amountMinor: 2 * standardPriceMinor },
    cancellationReason: expect.stringContaining('operator'),
  });
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual([]);
  expect(await paymentLedger(testBed.saga.database, pending.id)).toMatchObject({
    charges: [2 * standardPriceMinor],
    refunds: [2 * standardPriceMinor],
  });
});
