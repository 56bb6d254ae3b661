// Every start of a booking's workflow is the same start, and the reconciler never runs two passes at once.
import { bookingStartOptions } from '../../../src/application/booking-starts';
import { createRequestMemoKey } from '../../../src/workflows/shared';
import { scheduleStartReconciliation } from '../../../src/application/start-reconciler';
import { defaultRefundRule } from '../../../src/domain/fares';
import { taskQueues } from '../../../src/domain/task-queues';
import {
  bookingWorkflowId,
  searchAttributes,
  type BookingWorkflowInput,
} from '../../../src/workflows/shared';

const input: BookingWorkflowInput = {
  bookingId: '5b9d1c1e-8f2a-4c3b-9d7e-6a5b4c3d2e1f',
  customerId: 'a1b2c3d4-0000-4000-8000-000000000001',
  tripId: 'trip-1',
  routeId: 'route-1',
  departureTime: '2026-12-01T08:30:00.000Z',
  originTimeZone: 'Europe/Lisbon',
  passengers: [
    {
      firstName: 'Ana',
      lastName: 'Silva',
      email: 'ana@example.com',
      seatNumber: '3A',
      fareClass: 'STANDARD',
    },
  ],
  passengerIds: ['p-1'],
  contactEmail: 'ana@example.com',
  farePrices: {},
  seatClasses: { '3A': 'STANDARD' },
  refundRule: defaultRefundRule,
  maxPassengers: 9,
  timings: {
    holdDurationMs: 900_000,
    changeCutoffMs: 3_600_000,
    activityStartToCloseMs: 30_000,
    activityRetryInitialIntervalMs: 1000,
    activityRetryMaximumIntervalMs: 60_000,
  },
};

test('a booking start names its workflow by the booking, joins a running one and never restarts an ended one', () => {
  const options = bookingStartOptions({ input, requestFingerprint: 'fingerprint' });
  expect(options).toMatchObject({
    workflowId: bookingWorkflowId(input.bookingId),
    taskQueue: taskQueues.bookings,
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    args: [input],
    memo: { [createRequestMemoKey]: 'fingerprint' },
  });
  expect(options.typedSearchAttributes).toContainEqual({
    key: searchAttributes.bookingStatus,
    value: 'PENDING_PAYMENT',
  });
  expect(options.staticSummary).toContain('3A');
});

test('the start goes to the queues the input names', () => {
  const queues = { ...taskQueues, bookings: 'bookings-test' };
  expect(
    bookingStartOptions({ input: { ...input, taskQueues: queues }, requestFingerprint: 'f' }).taskQueue,
  ).toBe('bookings-test');
});

describe('scheduleStartReconciliation', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('a pass still going is not joined by another, and a failed pass is reported and followed by the next', async () => {
    const passes: (() => void)[] = [];
    const failures: unknown[] = [];
    let calls = 0;
    const stop = scheduleStartReconciliation(
      {
        reconcile: () => {
          calls += 1;
          if (calls === 2) return Promise.reject(new Error('Temporal out of reach'));
          return new Promise<number>((resolve) => passes.push(() => resolve(0)));
        },
      },
      1000,
      (error) => failures.push(error),
    );
    await jest.advanceTimersByTimeAsync(3500);
    expect(calls).toBe(1);
    passes[0]();
    await jest.advanceTimersByTimeAsync(1000);
    expect(calls).toBe(2);
    await jest.advanceTimersByTimeAsync(1000);
    expect(failures).toEqual([new Error('Temporal out of reach')]);
    expect(calls).toBe(3);
    stop();
    await jest.advanceTimersByTimeAsync(5000);
    expect(calls).toBe(3);
  });
});
