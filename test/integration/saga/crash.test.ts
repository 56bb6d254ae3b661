// A worker process killed between the charge and the confirmation: a fresh worker finishes the booking, charged once.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { findDomainError } from '../../../src/domain/errors';
import { startCrashWorker, type CrashWorker } from '../../support/crash-worker';
import { useSagaTestBed } from '../../support/saga';
import { activeSeatsOf, paymentLedger } from '../../support/booking-records';
import { bookingRequest, standardPriceMinor } from '../../support/trips';
import { eventually } from '../../support/outcomes';

/** The child worker needs a few seconds to start on two shared cores; the retry itself takes seconds too. */
jest.setTimeout(180_000);

let crashingWorker: CrashWorker | undefined;

// Registered before the test bed's hooks, so the crashing worker stops before the environment does.
afterAll(async () => {
  await crashingWorker?.stop();
});

const testBed = useSagaTestBed(
  { seatCount: 4 },
  {
    startWorkers: false,
    // The killed attempt of ProcessPayment is retried once its start-to-close timeout runs out: keep it short.
    timings: { activityStartToCloseMs: 3000, activityRetryInitialIntervalMs: 200 },
  },
);

async function paymentRowsOf(
  bookingId: string,
): Promise<{ status: string; gateway_transaction_id: string }[]> {
  return testBed.saga
    .database('payments')
    .where({ booking_id: bookingId })
    .select('status', 'gateway_transaction_id');
}

test('the worker dies after the charge and before the confirmation; a fresh worker confirms with the one charge', async () => {
  const startedAt = Date.now();
  crashingWorker = await startCrashWorker({
    taskQueueNames: testBed.saga.taskQueueNames,
    workflowBundle: testBed.saga.workflowBundle,
    outboxDirectory: testBed.saga.outboxDirectory,
    killAt: 'after-charge',
  });
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['1A']),
  );
  expect(pending.status).toBe('PENDING_PAYMENT');

  // The customer's request is sent before the crash: the update is accepted, its handler is mid-payment.
  const attemptId = randomUUID();
  const pay = () =>
    testBed.saga.application
      .confirmPayment(testBed.customer, pending.id, { paymentToken: 'tok_visa' }, { attemptId })
      .then(
        (booking) => ({ booking }),
        (error: unknown) => ({ error }),
      );
  const confirmation = pay();

  const exit = await crashingWorker.exited;
  const crashedAt = Date.now();
  expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
  // The money moved at the gateway, but the activity never returned: the service recorded nothing yet.
  expect(await paymentLedger(testBed.saga.database, pending.id)).toMatchObject({
    charges: [standardPriceMinor],
    declinedCharges: 0,
  });
  expect(await paymentRowsOf(pending.id)).toEqual([]);
  expect((await testBed.saga.application.getBooking(testBed.customer, pending.id)).status).toBe(
    'PENDING_PAYMENT',
  );
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual(['1A:HELD']);

  await testBed.saga.startWorkers();
  const confirmed = await eventually(
    () => testBed.saga.application.getBooking(testBed.customer, pending.id),
    (booking) => booking.status === 'CONFIRMED',
    { timeoutMs: 90_000, intervalMs: 250 },
  );
  const recoveredAt = Date.now();
  process.stdout.write(
    `crash: worker killed ${crashedAt - startedAt} ms after start, booking CONFIRMED ${recoveredAt - crashedAt} ms after the kill\n`,
  );

  expect(confirmed).toMatchObject({
    status: 'CONFIRMED',
    amountPaid: { amountMinor: standardPriceMinor },
    payment: { status: 'CAPTURED', method: 'visa •••• 4242' },
  });
  // The crash outlasts the payment's answer time, so its first answer says it is still running (or, after a quick
  // recovery, gives its outcome); the same attempt asked again answers the one outcome.
  const first = await confirmation;
  if ('error' in first) expect(findDomainError(first.error)?.code).toBe('BOOKING_PROCESSING');
  expect(await pay()).toEqual({ booking: expect.objectContaining({ status: 'CONFIRMED' }) });
  // The retried ProcessPayment reused the idempotency key: the gateway answered with the original charge.
  const ledger = await paymentLedger(testBed.saga.database, pending.id);
  expect(ledger).toMatchObject({ charges: [standardPriceMinor], declinedCharges: 0, refunds: [] });
  const paymentRows = await paymentRowsOf(pending.id);
  expect(paymentRows).toHaveLength(1);
  expect(paymentRows[0].status).toBe('APPROVED');
  const [charge] = await testBed.saga
    .database('payment_simulator.charges')
    .where('idempotency_key', 'like', `${pending.id}:%`)
    .select<{ transaction_id: string }[]>('transaction_id');
  expect(paymentRows[0].gateway_transaction_id).toBe(charge.transaction_id);
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual(['1A:BOOKED']);

  // Temporal saw two attempts of the one ProcessPayment activity: the lost one, and the retry that answered.
  const events =
    (await testBed.saga.client.workflow.getHandle(`booking-${pending.id}`).fetchHistory()).events ?? [];
  const paymentSchedules = events.filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'ProcessPayment',
  );
  expect(paymentSchedules).toHaveLength(1);
  const paymentStart = events.find(
    (event) =>
      String(event.activityTaskStartedEventAttributes?.scheduledEventId) ===
      String(paymentSchedules[0].eventId),
  );
  expect(paymentStart?.activityTaskStartedEventAttributes?.attempt).toBe(2);
});
