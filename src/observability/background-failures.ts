// Failures of work nobody waits for (a create's late settle, closing a lost connection): logged and counted.
import { Counter, Registry } from 'prom-client';

/** The pieces of background work whose failures are counted, one label value each. */
export const backgroundTasks = [
  'settle_late_create',
  'close_availability_listener',
  'unreadable_lost_start',
] as const;
export type BackgroundTask = (typeof backgroundTasks)[number];

/** Where a failure nobody waits for is told; the layer's caller decides what it is (the process's logger). */
/** `fields` name what failed (a booking id) on the warning line; never a secret or personal data. */
export type ReportBackgroundFailure = (task: BackgroundTask, error: unknown, fields?: object) => void;

/** The part of a logger (pino's signature) a report needs: layers below the logger cannot import it. */
export interface BackgroundFailureLog {
  warn(fields: object, message: string): void;
}

const messages: Readonly<Record<BackgroundTask, string>> = {
  settle_late_create:
    'settling a create after its answer failed; the start reconciler retries its start and its slot lapses',
  close_availability_listener: 'closing a lost availability-changes connection failed',
  unreadable_lost_start:
    'a lost start cannot be decrypted with ENCRYPTION_KEYS; it stays promised, unstarted, until a process holding its key starts it',
};

/** `bus_booking_background_failures_total{task}` in `registry`, every task's series at 0 from the start. */
export function createBackgroundFailures(registry: Registry): Counter<'task'> {
  const counter = new Counter({
    name: 'bus_booking_background_failures_total',
    help: 'Failures of background work nobody waits for, by task; each is also logged',
    labelNames: ['task'] as const,
    registers: [registry],
  });
  for (const task of backgroundTasks) counter.inc({ task }, 0);
  return counter;
}

/** Reports each failure with one warning line and one count. */
export function backgroundFailureReporter(
  counter: Counter<'task'>,
  log: BackgroundFailureLog,
): ReportBackgroundFailure {
  return (task, error, fields) => {
    counter.inc({ task });
    log.warn({ ...fields, err: error, task }, messages[task]);
  };
}

/** A warning as one JSON line on standard error, for a caller that has no logger to give. */
const standardErrorLog: BackgroundFailureLog = {
  warn(fields, message) {
    const { err, ...rest } = fields as { err?: unknown };
    const error = err instanceof Error ? { message: err.message, stack: err.stack } : err;
    process.stderr.write(`${JSON.stringify({ level: 'warn', msg: message, ...rest, err: error })}\n`);
  },
};

/**
 * A reporter with a counter of its own, for an application composed without the process's metrics (tests, tools):
 * failures are still logged (on standard error without a logger), and counted where nothing scrapes them.
 */
export function standaloneBackgroundFailureReporter(
  log: BackgroundFailureLog = standardErrorLog,
): ReportBackgroundFailure {
  return backgroundFailureReporter(createBackgroundFailures(new Registry()), log);
}
