// Every request the load made and what it was answered, and the figures read from them per kill window.
import type { Answer } from './fronts';

export const requestKinds = ['create', 'pay', 'change', 'cancel', 'get'] as const;
export type RequestKind = (typeof requestKinds)[number];

/**
 * ok: the operation was done. refused: a clear business answer (seat taken, version moved on, too many holds).
 * processing: the create is still going on (202, BOOKING_PROCESSING). failed: no usable answer (5xx, UNAVAILABLE,
 * a timeout, a refused connection).
 */
export type OutcomeClass = 'ok' | 'refused' | 'processing' | 'failed';

export interface RequestRecord {
  kind: RequestKind;
  front: string;
  startedAt: number;
  endedAt: number;
  outcome: OutcomeClass;
  status: string;
  code?: string;
  bookingId?: string;
}

const businessRefusals = new Set([
  'SEAT_UNAVAILABLE',
  'HOLD_EXPIRED',
  'PAYMENT_DECLINED',
  'VERSION_MISMATCH',
  'BOOKING_STATE_CONFLICT',
  'RATE_LIMITED',
  'NOT_FOUND',
]);

export function classify(answer: Answer): OutcomeClass {
  if (answer.ok) return 'ok';
  if (answer.code === 'BOOKING_PROCESSING') return 'processing';
  // RATE_LIMITED on a create is the open-hold cap; UNAVAILABLE is always a failure, whatever code it carries.
  if (answer.code !== undefined && businessRefusals.has(answer.code)) return 'refused';
  return 'failed';
}

/** A moment the chaos sequence acted: a process killed, or the Temporal tier restarted. */
export interface ChaosEvent {
  name: string;
  at: number;
  /** When the action itself returned (a tier restart waits until the frontend is healthy). */
  doneAt: number;
}

export interface WindowFigures {
  event: ChaosEvent;
  /** Until the next event, or the end of the load. */
  endsAt: number;
  byKind: Record<RequestKind, Record<OutcomeClass, number>>;
  /** Milliseconds from the event to the end of the first OK request started after it, per kind seen OK. */
  firstOkAfterMs: Partial<Record<RequestKind, number>>;
  /** From the event to the first OK request of any kind started after it. */
  recoveryMs: number | undefined;
  /** From the event to the end of the last failed request started in the window. */
  lastFailureAfterMs: number | undefined;
}

function emptyCounts(): Record<RequestKind, Record<OutcomeClass, number>> {
  return Object.fromEntries(
    requestKinds.map((kind) => [kind, { ok: 0, refused: 0, processing: 0, failed: 0 }]),
  ) as Record<RequestKind, Record<OutcomeClass, number>>;
}

export class RequestLog {
  readonly records: RequestRecord[] = [];

  add(kind: RequestKind, front: string, startedAt: number, answer: Answer, bookingId?: string): OutcomeClass {
    const outcome = classify(answer);
    this.records.push({
      kind,
      front,
      startedAt,
      endedAt: Date.now(),
      outcome,
      status: answer.status,
      ...(answer.code === undefined ? {} : { code: answer.code }),
      ...(bookingId === undefined ? {} : { bookingId }),
    });
    return outcome;
  }

  /** Whether a request (of `kind`, when given) started after `since` has been answered OK. */
  okSince(since: number, kind?: RequestKind): boolean {
    return this.records.some(
      (record) =>
        record.outcome === 'ok' && record.startedAt >= since && (kind === undefined || record.kind === kind),
    );
  }

  countsBetween(from: number, to: number): Record<RequestKind, Record<OutcomeClass, number>> {
    const counts = emptyCounts();
    for (const record of this.records) {
      if (record.startedAt >= from && record.startedAt < to) counts[record.kind][record.outcome] += 1;
    }
    return counts;
  }

  windows(events: readonly ChaosEvent[], loadEndedAt: number): WindowFigures[] {
    return events.map((event, index) => {
      const endsAt = events[index + 1]?.at ?? loadEndedAt;
      const inWindow = this.records.filter(
        (record) => record.startedAt >= event.at && record.startedAt < endsAt,
      );
      const firstOkAfterMs: Partial<Record<RequestKind, number>> = {};
      for (const record of inWindow) {
        if (record.outcome !== 'ok') continue;
        const after = record.endedAt - event.at;
        firstOkAfterMs[record.kind] = Math.min(firstOkAfterMs[record.kind] ?? Infinity, after);
      }
      const okTimes = Object.values(firstOkAfterMs);
      const failures = inWindow.filter((record) => record.outcome === 'failed');
      return {
        event,
        endsAt,
        byKind: this.countsBetween(event.at, endsAt),
        firstOkAfterMs,
        recoveryMs: okTimes.length > 0 ? Math.min(...okTimes) : undefined,
        lastFailureAfterMs:
          failures.length > 0 ? Math.max(...failures.map((record) => record.endedAt - event.at)) : undefined,
      };
    });
  }
}
