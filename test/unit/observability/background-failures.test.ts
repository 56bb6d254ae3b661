// Failures nobody waits for: each one is a warning line and a count of its task.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { Registry } from 'prom-client';
import type { BookingContext } from '../../../src/application/booking-context';
import { settleLateCreate, type StartedCreate } from '../../../src/application/create-answers';
import {
  backgroundFailureReporter,
  backgroundTasks,
  createBackgroundFailures,
} from '../../../src/observability/background-failures';

async function countOf(registry: Registry, task: string): Promise<number | undefined> {
  const metric = await registry.getSingleMetric('bus_booking_background_failures_total')?.get();
  return metric?.values.find((value) => value.labels.task === task)?.value;
}

function recordingLog() {
  const lines: { fields: object; message: string }[] = [];
  return { lines, warn: (fields: object, message: string) => void lines.push({ fields, message }) };
}

describe('backgroundFailureReporter', () => {
  it('starts every task at 0, then logs and counts each failure', async () => {
    const registry = new Registry();
    const log = recordingLog();
    const report = backgroundFailureReporter(createBackgroundFailures(registry), log);
    for (const task of backgroundTasks) expect(await countOf(registry, task)).toBe(0);

    const error = new Error('connection reset');
    report('settle_late_create', error);

    expect(await countOf(registry, 'settle_late_create')).toBe(1);
    expect(await countOf(registry, 'close_availability_listener')).toBe(0);
    expect(log.lines).toEqual([
      { fields: { err: error, task: 'settle_late_create' }, message: expect.any(String) as string },
    ]);
  });

  it('names what failed on the line when the caller says', () => {
    const log = recordingLog();
    const report = backgroundFailureReporter(createBackgroundFailures(new Registry()), log);
    const error = new Error('not an envelope');
    report('unreadable_lost_start', error, { bookingId: 'b-1' });
    expect(log.lines[0]?.fields).toEqual({ bookingId: 'b-1', err: error, task: 'unreadable_lost_start' });
  });
});

describe('settleLateCreate', () => {
  it('reports a failure of the settle instead of dropping it', async () => {
    const failure = new Error('database gone');
    const reported: [string, unknown][] = [];
    const context = {
      holdClaims: { release: () => Promise.reject(failure) },
      reportFailure: (task: string, error: unknown) => void reported.push([task, error]),
    } as unknown as BookingContext;
    const refusal = new WorkflowUpdateFailedError('refused', new Error('SEAT_UNAVAILABLE'));
    const started = {
      sealedStart: 'sealed',
      operation: undefined,
      outcome: Promise.resolve({ error: refusal }),
    } as unknown as StartedCreate;

    settleLateCreate(context, 'booking-id', started);

    await new Promise((resolve) => setImmediate(resolve));
    expect(reported).toEqual([['settle_late_create', failure]]);
  });
});
