// What a command's caller says of it: when it must be answered, and the id that makes its repeats one command.
/** When a command must be answered, and the name that makes its repeats one command. */
export interface CommandOptions {
  /** Epoch milliseconds by which the caller needs its answer (a gRPC deadline less a margin). */
  answerBy?: number;
  /** Epoch milliseconds when the front received the request: the answer time counts from here. */
  receivedAt?: number;
  /**
   * Names the command (an Idempotency-Key's reservation, or derived from gRPC's request_id): a repeat with the
   * same id joins the command already sent and answers its outcome.
   */
  commandId?: string;
}
