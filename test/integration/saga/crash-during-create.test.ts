// A worker killed after a new booking's seats were held, before its workflow task completed: the retried task agrees with what was stored.
import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import { bookingStateQuery, bookingWorkflowId } from '../../../src/workflows/shared';
import { scanInvariants } from '../../cluster/invariants/scan';
import { startCrashWorker, type CrashWorker } from '../../support/crash-worker';
import { useSagaTestBed } from '../../support/saga';
import { activeSeatsOf } from '../../support/booking-records';
import { bookingRequest } from '../../support/trips';
import { eventually } from '../../support/outcomes';

/** The lost workflow task is retried once its timeout (10 s) runs out, after the child worker's start. */
jest.setTimeout(180_000);

let crashingWorker: CrashWorker | undefined;

// Registered before the test bed's hooks, so the crashing worker stops before the environment does.
afterAll(async () => {
  await crashingWorker?.stop();
});

const testBed = useSagaTestBed({ seatCount: 4 }, { startWorkers: false });

test('the worker dies once the first reservation committed; the retried workflow task keeps the stored hold and passengers', async () => {
  const { saga, customer, trip } = testBed;
  crashingWorker = await startCrashWorker({
    taskQueueNames: saga.taskQueueNames,
    workflowBundle: saga.workflowBundle,
    outboxDirectory: saga.outboxDirectory,
    killAt: 'after-first-reservation',
  });
  const bookingId = randomUUID();
  // A create's answer or its error, so that neither rejects while the test waits on other things.
  const sendCreate = () =>
    saga.application.createBooking(customer, bookingRequest(trip, ['1A']), { bookingId }).then(
      (booking) => ({ booking }),
      (error: unknown) => ({ error }),
    );
  const create = sendCreate();
  expect(await crashingWorker.exited).toEqual({ code: null, signal: 'SIGKILL' });
  // The caller, hearing nothing, sends the create again: its update joins the lost one in the retried task.
  const retriedCreate = sendCreate();

  // The lost task's reservation committed: the booking row and its hold exist, written at its time.
  const stored = await saga
    .database('bookings')
    .where({ id: bookingId })
    .first<{ hold_expires_at: Date; created_at: Date }>('hold_expires_at', 'created_at');
  expect(stored).toBeDefined();
  expect(await activeSeatsOf(saga.database, bookingId)).toEqual(['1A:HELD']);

  // Temporal runs the first workflow task again, on a fresh worker, at least a task timeout later.
  await saga.startWorkers();
  const handle = saga.client.workflow.getHandle(bookingWorkflowId(bookingId));
  const state = await eventually(
    () => handle.query(bookingStateQuery).catch(() => undefined),
    (booking) => booking?.status === 'PENDING_PAYMENT',
    { timeoutMs: 90_000, intervalMs: 250 },
  );
  // The create waited past its answer time for the lost task, or was answered by the retried one.
  for (const answered of [await create, await retriedCreate]) {
    if ('booking' in answered) expect(answered.booking.holdExpiresAt).toBe(state?.holdExpiresAt);
    else expect(answered.error).toMatchObject({ code: 'BOOKING_PROCESSING' });
  }

  // One hold, one deadline: the workflow's timer, the read model and the seat's hold all end at the same instant.
  const view = await saga.application.getBooking(customer, bookingId);
  expect(view).toMatchObject({ status: 'PENDING_PAYMENT', version: 1, holdExpiresAt: state?.holdExpiresAt });
  // The passenger the lost task stored is the passenger the workflow knows.
  expect(view.passengers.map((passenger) => passenger.id)).toEqual(
    state?.passengers.map((passenger) => passenger.id),
  );
  expect(state?.holdExpiresAt).toBe(stored?.hold_expires_at.toISOString());
  expect(state?.createdAt).toBe(stored?.created_at.toISOString());
  const holds = await saga
    .database('seat_allocations')
    .where({ booking_id: bookingId })
    .select<{ hold_expires_at: Date }[]>('hold_expires_at');
  expect(holds.map((hold) => hold.hold_expires_at.toISOString())).toEqual([state?.holdExpiresAt]);

  const report = await scanInvariants({
    database: saga.database,
    temporal: saga.client,
    cipher: saga.cipher,
    scope: { bookingIds: [bookingId] },
  });
  expect(report.results.filter((result) => result.violations.length > 0)).toEqual([]);
});
