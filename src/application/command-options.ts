// What a request's caller says of it: when it must be answered, and the id that makes its repeats one command.

/** When a request must be answered: what the front knows of its arrival and of the caller's deadline. */
export interface AnswerTiming {
  /** Epoch milliseconds by which the caller needs its answer (a gRPC deadline less a margin). */
  answerBy?: number;
  /**
   * Epoch milliseconds when the front received the request: the answer time counts from here, so time spent
   * queueing before the application (a burst) is not added on top of it.
   */
  receivedAt?: number;
}

/**
 * When a create or command must be answered: its answer time from its arrival, or the caller's sooner deadline.
 * `now` is the caller's clock, read when the front did not say when the request arrived.
 */
export function answerByOf(
  timing: AnswerTiming,
  answerTimeoutMs: number,
  now: () => Date = () => new Date(),
): number {
  return Math.min(
    (timing.receivedAt ?? now().getTime()) + answerTimeoutMs,
    timing.answerBy ?? Number.POSITIVE_INFINITY,
  );
}

/** When a command must be answered, and the name that makes its repeats one command. */
export interface CommandOptions extends AnswerTiming {
  /**
   * Names the command (an Idempotency-Key's reservation, or derived from gRPC's request_id): a repeat with the
   * same id joins the command already sent and answers its outcome.
   */
  commandId?: string;
}
