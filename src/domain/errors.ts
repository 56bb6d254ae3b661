// The one error vocabulary of the service: codes, their HTTP and gRPC statuses, and DomainError.
import type { BookingAction, BookingStatus } from './booking';

export const errorCodes = [
  'VALIDATION_FAILED',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'SEAT_UNAVAILABLE',
  'BOOKING_STATE_CONFLICT',
  'HOLD_EXPIRED',
  'PAYMENT_DECLINED',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_IN_USE',
  'VERSION_MISMATCH',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMITED',
  'UNAVAILABLE',
  'INTERNAL',
  'BOOKING_PROCESSING',
  'TICKET_INVALID',
  'TICKET_REVOKED',
  'ALREADY_BOARDED',
  'DISCOUNT_CODE_INVALID',
  'PRICE_CHANGED',
  'QUOTE_EXPIRED',
  'QUOTE_INVALID',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** gRPC status names with their wire numbers (grpc-js `status` enum values). */
export const grpcStatusCodes = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcStatusName = keyof typeof grpcStatusCodes;

export interface ErrorCodeMapping {
  readonly httpStatus: number;
  readonly grpcStatus: GrpcStatusName;
  /** Short, stable summary used as the RFC 9457 `title`. */
  readonly title: string;
  /** The same request may succeed later: REST answers with Retry-After, Temporal activities may retry. */
  readonly retryable: boolean;
}

/** The error model of docs/design.md, in one place for both fronts. */
export const errorCodeMappings: Readonly<Record<ErrorCode, ErrorCodeMapping>> = {
  VALIDATION_FAILED: {
    httpStatus: 400,
    grpcStatus: 'INVALID_ARGUMENT',
    title: 'Validation failed',
    retryable: false,
  },
  UNAUTHENTICATED: {
    httpStatus: 401,
    grpcStatus: 'UNAUTHENTICATED',
    title: 'Authentication required',
    retryable: false,
  },
  PERMISSION_DENIED: {
    httpStatus: 403,
    grpcStatus: 'PERMISSION_DENIED',
    title: 'Permission denied',
    retryable: false,
  },
  NOT_FOUND: { httpStatus: 404, grpcStatus: 'NOT_FOUND', title: 'Not found', retryable: false },
  SEAT_UNAVAILABLE: {
    httpStatus: 409,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Seat unavailable',
    retryable: false,
  },
  BOOKING_STATE_CONFLICT: {
    httpStatus: 409,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Booking state conflict',
    retryable: false,
  },
  HOLD_EXPIRED: {
    httpStatus: 409,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Hold expired',
    retryable: false,
  },
  PAYMENT_DECLINED: {
    httpStatus: 402,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Payment declined',
    retryable: false,
  },
  IDEMPOTENCY_KEY_REUSED: {
    httpStatus: 422,
    grpcStatus: 'INVALID_ARGUMENT',
    title: 'Idempotency key reused with a different request',
    retryable: false,
  },
  IDEMPOTENCY_KEY_IN_USE: {
    httpStatus: 409,
    grpcStatus: 'ABORTED',
    title: 'Idempotency key in use',
    retryable: true,
  },
  VERSION_MISMATCH: { httpStatus: 412, grpcStatus: 'ABORTED', title: 'Version mismatch', retryable: false },
  PAYLOAD_TOO_LARGE: {
    httpStatus: 413,
    grpcStatus: 'RESOURCE_EXHAUSTED',
    title: 'Payload too large',
    retryable: false,
  },
  RATE_LIMITED: { httpStatus: 429, grpcStatus: 'RESOURCE_EXHAUSTED', title: 'Rate limited', retryable: true },
  UNAVAILABLE: { httpStatus: 503, grpcStatus: 'UNAVAILABLE', title: 'Service unavailable', retryable: true },
  INTERNAL: { httpStatus: 500, grpcStatus: 'INTERNAL', title: 'Internal error', retryable: false },
  // Not a failure: the booking exists and its seats are still being held. REST answers 202 Accepted with the
  // booking id, never a problem document. A unary gRPC call can only say it with a status: UNAVAILABLE, as it is
  // transient (GetBooking by the id in ErrorInfo, or the same request_id, answers the outcome after RetryInfo);
  // DEADLINE_EXCEEDED would look like the caller's own deadline passing, without details, and fits no read.
  BOOKING_PROCESSING: {
    httpStatus: 202,
    grpcStatus: 'UNAVAILABLE',
    title: 'Booking still processing',
    retryable: true,
  },
  // A scanned ticket that is malformed, forged, signed by a key the ticket key set does not publish, or outside
  // its validity window; `details.reason` says which.
  TICKET_INVALID: {
    httpStatus: 422,
    grpcStatus: 'INVALID_ARGUMENT',
    title: 'Ticket invalid',
    retryable: false,
  },
  // A well-signed ticket that a seat, segment or passenger change replaced, or whose booking was cancelled.
  TICKET_REVOKED: {
    httpStatus: 409,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Ticket revoked',
    retryable: false,
  },
  // A second scan of a passenger who has boarded; `details` name when and at which stop the first was.
  ALREADY_BOARDED: {
    httpStatus: 409,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Passenger already boarded',
    retryable: false,
  },
  // A discount code that is unknown, outside its dates, not for this route or currency, or used up;
  // `details.reason` says which. The request is well-formed, so not VALIDATION_FAILED.
  DISCOUNT_CODE_INVALID: {
    httpStatus: 422,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Discount code not redeemable',
    retryable: false,
  },
  // The total the client showed is no longer the price; `details` carry the current total and breakdown, and
  // nothing was held or charged. ABORTED as for VERSION_MISMATCH: read again, then decide.
  PRICE_CHANGED: { httpStatus: 409, grpcStatus: 'ABORTED', title: 'Price changed', retryable: false },
  // A refund quote past its `validUntil`; a new quote states what a cancellation refunds now.
  QUOTE_EXPIRED: {
    httpStatus: 409,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Refund quote expired',
    retryable: false,
  },
  // A refund quote of another booking or other passengers, or of a booking changed since; `details.reason` says
  // which.
  QUOTE_INVALID: {
    httpStatus: 422,
    grpcStatus: 'FAILED_PRECONDITION',
    title: 'Refund quote does not apply',
    retryable: false,
  },
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (errorCodes as readonly string[]).includes(value);
}

export type JsonValue =
  string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

export interface FieldViolation {
  /** Path in the contract's snake_case names, e.g. `passengers[1].email`; `''` is the request as a whole. */
  readonly field: string;
  readonly message: string;
}

/** The plain-data form that crosses JSON boundaries (Temporal ApplicationFailure details, queues, logs). */
export interface DomainErrorData {
  readonly code: ErrorCode;
  readonly message: string;
  readonly fieldViolations?: readonly FieldViolation[];
  readonly details?: Readonly<Record<string, JsonValue>>;
}

/**
 * A business error with a stable code. Messages reach clients as the problem `detail`, so they never
 * contain personal data, SQL or stack traces.
 */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  readonly code: ErrorCode;
  readonly fieldViolations: readonly FieldViolation[];
  readonly details: Readonly<Record<string, JsonValue>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      fieldViolations?: readonly FieldViolation[];
      details?: Readonly<Record<string, JsonValue>>;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.fieldViolations = options.fieldViolations ?? [];
    this.details = options.details ?? {};
  }

  get mapping(): ErrorCodeMapping {
    return errorCodeMappings[this.code];
  }

  toJSON(): DomainErrorData {
    return {
      code: this.code,
      message: this.message,
      ...(this.fieldViolations.length > 0 ? { fieldViolations: this.fieldViolations } : {}),
      ...(Object.keys(this.details).length > 0 ? { details: this.details } : {}),
    };
  }

  static fromJSON(data: DomainErrorData): DomainError {
    return new DomainError(data.code, data.message, {
      fieldViolations: data.fieldViolations,
      details: data.details,
    });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function isDomainErrorData(value: unknown): value is DomainErrorData {
  if (!isRecord(value) || !isErrorCode(value.code) || typeof value.message !== 'string') return false;
  const violations = value.fieldViolations;
  if (violations !== undefined) {
    if (!Array.isArray(violations)) return false;
    const wellFormed = violations.every(
      (violation) =>
        isRecord(violation) && typeof violation.field === 'string' && typeof violation.message === 'string',
    );
    if (!wellFormed) return false;
  }
  return value.details === undefined || (isRecord(value.details) && !Array.isArray(value.details));
}

const maximumCauseDepth = 10;

/**
 * Finds the DomainError inside whatever a boundary threw: the error itself, its plain-data form, or one
 * wrapped in `cause` chains and `details` arrays (Temporal's WorkflowFailedError → ApplicationFailure with
 * `details: [DomainErrorData]`), without depending on Temporal here.
 */
export function findDomainError(error: unknown): DomainError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < maximumCauseDepth && isRecord(current); depth += 1) {
    if (current instanceof DomainError) return current;
    if (isDomainErrorData(current)) return DomainError.fromJSON(current);
    if (Array.isArray(current.details)) {
      const data = current.details.find(isDomainErrorData);
      if (data !== undefined) return DomainError.fromJSON(data);
    }
    current = current.cause;
  }
  return undefined;
}

/** Anything that is not a DomainError becomes INTERNAL with a generic message: no internals leak. */
export function toDomainError(error: unknown): DomainError {
  return findDomainError(error) ?? internalError(error);
}

/** The detail counts fields, not violations: a field may break more than one rule. */
export function validationFailed(fieldViolations: readonly FieldViolation[]): DomainError {
  const count = new Set(fieldViolations.map((violation) => violation.field)).size;
  return new DomainError(
    'VALIDATION_FAILED',
    `The request has ${count} invalid field${count === 1 ? '' : 's'}`,
    {
      fieldViolations,
    },
  );
}

/** `because`, when given, says why after the seats (e.g. another booking is reserving them). */
export function seatUnavailable(seatNumbers: readonly string[], because?: string): DomainError {
  const plural = seatNumbers.length === 1 ? 'Seat' : 'Seats';
  const verb = seatNumbers.length === 1 ? 'is' : 'are';
  const reason = because === undefined ? '' : `: ${because}`;
  return new DomainError(
    'SEAT_UNAVAILABLE',
    `${plural} ${seatNumbers.join(', ')} ${verb} not available${reason}`,
    {
      details: { seatNumbers: [...seatNumbers] },
    },
  );
}

const actionPhrases: Readonly<Record<BookingAction, string>> = {
  'confirm-payment': 'confirm payment for',
  cancel: 'cancel',
  update: 'change',
  expire: 'expire',
  complete: 'complete',
  board: 'board a passenger of',
};

export function bookingStateConflict(
  status: BookingStatus,
  action: BookingAction,
  reason?: string,
): DomainError {
  const message = `Cannot ${actionPhrases[action]} a booking in status ${status}`;
  return new DomainError('BOOKING_STATE_CONFLICT', reason === undefined ? message : `${message}: ${reason}`, {
    details: { status, action },
  });
}

export function holdExpired(holdExpiresAt: string): DomainError {
  return new DomainError('HOLD_EXPIRED', `The seat hold expired at ${holdExpiresAt}`, {
    details: { holdExpiresAt },
  });
}

export function notFound(resource: string, id: string): DomainError {
  return new DomainError('NOT_FOUND', `${resource} ${id} was not found`, { details: { resource, id } });
}

export function paymentDeclined(declineReason: string): DomainError {
  return new DomainError('PAYMENT_DECLINED', `The payment was declined: ${declineReason}`, {
    details: { declineReason },
  });
}

export function versionMismatch(expectedVersion: number, currentVersion: number): DomainError {
  return new DomainError(
    'VERSION_MISMATCH',
    `The booking is at version ${currentVersion}, the request expected ${expectedVersion}`,
    { details: { expectedVersion, currentVersion } },
  );
}

export function idempotencyKeyReused(): DomainError {
  return new DomainError(
    'IDEMPOTENCY_KEY_REUSED',
    'This idempotency key was already used with a different request',
  );
}

export function idempotencyKeyInUse(retryAfterSeconds: number): DomainError {
  return new DomainError(
    'IDEMPOTENCY_KEY_IN_USE',
    'A request with this idempotency key is still in progress',
    {
      details: { retryAfterSeconds },
    },
  );
}

export function unauthenticated(message = 'A valid bearer token is required'): DomainError {
  return new DomainError('UNAUTHENTICATED', message);
}

export function permissionDenied(message = 'The caller may not perform this operation'): DomainError {
  return new DomainError('PERMISSION_DENIED', message);
}

export function payloadTooLarge(limitBytes: number): DomainError {
  return new DomainError('PAYLOAD_TOO_LARGE', `The request body exceeds ${limitBytes} bytes`, {
    details: { limitBytes },
  });
}

export function rateLimited(retryAfterSeconds: number): DomainError {
  return new DomainError('RATE_LIMITED', 'Too many requests', { details: { retryAfterSeconds } });
}

export function unavailable(
  message = 'The service is temporarily unavailable',
  retryAfterSeconds = 1,
): DomainError {
  return new DomainError('UNAVAILABLE', message, { details: { retryAfterSeconds } });
}

/** The booking was started and is still holding its seats: read it by id after the delay. */
export function bookingProcessing(bookingId: string, retryAfterSeconds: number): DomainError {
  return new DomainError(
    'BOOKING_PROCESSING',
    `Booking ${bookingId} is still being made; read it by its id after ${retryAfterSeconds} s for the outcome`,
    { details: { bookingId, state: 'PROCESSING', retryAfterSeconds } },
  );
}

/**
 * A cancel of a booking still being made: recorded, and applied as soon as its seats are held. Answered as the
 * booking's read is meanwhile (BOOKING_PROCESSING), so a client polls one way for both.
 */
export function cancellationRecorded(bookingId: string, retryAfterSeconds: number): DomainError {
  return new DomainError(
    'BOOKING_PROCESSING',
    `Booking ${bookingId} is still being made; its cancellation is recorded and applied as soon as its seats are held. Read it by its id after ${retryAfterSeconds} s`,
    { details: { bookingId, state: 'PROCESSING', retryAfterSeconds } },
  );
}

/** What each booking command is called when it is still running at its answer time. */
export type BookingCommandName = 'payment' | 'change' | 'cancellation';

/**
 * A command was handed to the booking's workflow and its answer time came first: it goes on, and its outcome is
 * the one a repeat of the same request (same Idempotency-Key or request_id) answers, or a read of the booking.
 */
export function commandInProgress(
  bookingId: string,
  command: BookingCommandName,
  retryAfterSeconds: number,
): DomainError {
  return new DomainError(
    'BOOKING_PROCESSING',
    `The ${command} of booking ${bookingId} was accepted and is still running; send the same request again ` +
      `(same Idempotency-Key or request_id) after ${retryAfterSeconds} s for its outcome, or read the booking`,
    { details: { bookingId, state: 'PROCESSING', command, retryAfterSeconds } },
  );
}

/** The answer time came before the command could be handed on: it was dropped, so a retry is safe. */
export function commandNotStarted(retryAfterSeconds = 1): DomainError {
  return unavailable(
    `The service was too busy to start the request in time; nothing was changed, retry after ${retryAfterSeconds} s`,
    retryAfterSeconds,
  );
}

/** The cause stays on the error for logs; it never reaches `toJSON` or a client. */
export function internalError(cause?: unknown): DomainError {
  return new DomainError('INTERNAL', 'An internal error occurred', { cause });
}
