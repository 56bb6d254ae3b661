// The error vocabulary: mapping table completeness, helpers, and the JSON round trip across Temporal.
import { expect } from '@jest/globals';
import {
  bookingStateConflict,
  DomainError,
  errorCodeMappings,
  errorCodes,
  findDomainError,
  grpcStatusCodes,
  holdExpired,
  idempotencyKeyInUse,
  idempotencyKeyReused,
  internalError,
  isDomainErrorData,
  isErrorCode,
  notFound,
  payloadTooLarge,
  paymentDeclined,
  permissionDenied,
  rateLimited,
  seatUnavailable,
  toDomainError,
  unauthenticated,
  unavailable,
  validationFailed,
  versionMismatch,
  type ErrorCode,
  type DomainErrorData,
} from '../../../src/domain/errors';

describe('error code mapping table', () => {
  it('maps every ErrorCode, and nothing else, to an HTTP and a gRPC status', () => {
    expect(Object.keys(errorCodeMappings).sort()).toEqual([...errorCodes].sort());
    for (const code of errorCodes) {
      const mapping = errorCodeMappings[code];
      // BOOKING_PROCESSING alone is not a failure on REST: 202 Accepted.
      expect(mapping.httpStatus).toBeGreaterThanOrEqual(code === 'BOOKING_PROCESSING' ? 202 : 400);
      expect(mapping.httpStatus).toBeLessThan(600);
      expect(grpcStatusCodes[mapping.grpcStatus]).toEqual(expect.any(Number));
      expect(mapping.title.length).toBeGreaterThan(0);
    }
  });

  it.each<[ErrorCode, number, string]>([
    ['VALIDATION_FAILED', 400, 'INVALID_ARGUMENT'],
    ['UNAUTHENTICATED', 401, 'UNAUTHENTICATED'],
    ['PERMISSION_DENIED', 403, 'PERMISSION_DENIED'],
    ['NOT_FOUND', 404, 'NOT_FOUND'],
    ['SEAT_UNAVAILABLE', 409, 'FAILED_PRECONDITION'],
    ['BOOKING_STATE_CONFLICT', 409, 'FAILED_PRECONDITION'],
    ['HOLD_EXPIRED', 409, 'FAILED_PRECONDITION'],
    ['PAYMENT_DECLINED', 402, 'FAILED_PRECONDITION'],
    ['IDEMPOTENCY_KEY_REUSED', 422, 'INVALID_ARGUMENT'],
    ['IDEMPOTENCY_KEY_IN_USE', 409, 'ABORTED'],
    ['VERSION_MISMATCH', 412, 'ABORTED'],
    ['PAYLOAD_TOO_LARGE', 413, 'RESOURCE_EXHAUSTED'],
    ['RATE_LIMITED', 429, 'RESOURCE_EXHAUSTED'],
    ['UNAVAILABLE', 503, 'UNAVAILABLE'],
    ['INTERNAL', 500, 'INTERNAL'],
    ['BOOKING_PROCESSING', 202, 'UNAVAILABLE'],
    ['DISCOUNT_CODE_INVALID', 422, 'FAILED_PRECONDITION'],
    ['PRICE_CHANGED', 409, 'ABORTED'],
    ['QUOTE_EXPIRED', 409, 'FAILED_PRECONDITION'],
    ['QUOTE_INVALID', 422, 'FAILED_PRECONDITION'],
  ])('%s is HTTP %d and gRPC %s as the error model says', (code, httpStatus, grpcStatus) => {
    expect(errorCodeMappings[code]).toMatchObject({ httpStatus, grpcStatus });
  });

  it('marks only the codes answered with Retry-After as retryable', () => {
    const retryable = errorCodes.filter((code) => errorCodeMappings[code].retryable);
    expect(retryable.sort()).toEqual([
      'BOOKING_PROCESSING',
      'IDEMPOTENCY_KEY_IN_USE',
      'RATE_LIMITED',
      'UNAVAILABLE',
    ]);
  });

  it('uses the grpc-js wire numbers', () => {
    expect(grpcStatusCodes).toMatchObject({
      INVALID_ARGUMENT: 3,
      NOT_FOUND: 5,
      PERMISSION_DENIED: 7,
      RESOURCE_EXHAUSTED: 8,
      FAILED_PRECONDITION: 9,
      ABORTED: 10,
      INTERNAL: 13,
      UNAVAILABLE: 14,
      UNAUTHENTICATED: 16,
    });
  });

  it('recognises error codes', () => {
    expect(isErrorCode('HOLD_EXPIRED')).toBe(true);
    expect(isErrorCode('hold_expired')).toBe(false);
    expect(isErrorCode(409)).toBe(false);
  });
});

describe('DomainError', () => {
  it('is an Error with a code, violations and details', () => {
    const error = validationFailed([
      { field: 'passengers[1].email', message: 'must be a valid email address' },
    ]);
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(DomainError);
    expect(error.name).toBe('DomainError');
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.mapping.httpStatus).toBe(400);
    expect(error.message).toBe('The request has 1 invalid field');
    expect(error.fieldViolations).toEqual([
      { field: 'passengers[1].email', message: 'must be a valid email address' },
    ]);
  });

  it('counts invalid fields, not violations: a field that breaks two rules is one invalid field', () => {
    const error = validationFailed([
      {
        field: 'passengers[0].seat_number',
        message: 'must be a seat number such as 12C (row 1-99, seat A-F)',
      },
      { field: 'passengers[0].seat_number', message: 'seat 12C is given to more than one passenger' },
      { field: 'contact_email', message: 'must be a valid email address' },
    ]);
    expect(error.message).toBe('The request has 2 invalid fields');
  });

  it('survives a JSON round trip', () => {
    const original = validationFailed([
      { field: 'trip_id', message: 'must be a UUID' },
      { field: 'passengers', message: 'must list 1 to 9 passengers' },
    ]);
    const data: unknown = JSON.parse(JSON.stringify(original));
    expect(data).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'The request has 2 invalid fields',
      fieldViolations: [
        { field: 'trip_id', message: 'must be a UUID' },
        { field: 'passengers', message: 'must list 1 to 9 passengers' },
      ],
    });
    expect(isDomainErrorData(data)).toBe(true);
    if (!isDomainErrorData(data)) throw new Error('unreachable');
    const restored = DomainError.fromJSON(data);
    expect(restored).toBeInstanceOf(DomainError);
    expect(restored.toJSON()).toEqual(original.toJSON());
  });

  it('keeps details through the round trip and leaves the cause out', () => {
    const original = internalError(new Error('connection refused to 10.0.0.1'));
    expect(original.cause).toBeInstanceOf(Error);
    expect(JSON.stringify(original)).not.toContain('10.0.0.1');
    const conflict = bookingStateConflict('CANCELLED', 'update');
    const crossed = JSON.parse(JSON.stringify(conflict)) as DomainErrorData;
    expect(DomainError.fromJSON(crossed).details).toEqual({
      status: 'CANCELLED',
      action: 'update',
    });
  });

  it('rejects data that is not a DomainError', () => {
    expect(isDomainErrorData(null)).toBe(false);
    expect(isDomainErrorData({ code: 'NOPE', message: 'x' })).toBe(false);
    expect(isDomainErrorData({ code: 'INTERNAL' })).toBe(false);
    expect(isDomainErrorData({ code: 'INTERNAL', message: 'x', fieldViolations: 'oops' })).toBe(false);
    expect(isDomainErrorData({ code: 'INTERNAL', message: 'x', fieldViolations: [{ field: 1 }] })).toBe(
      false,
    );
    expect(isDomainErrorData({ code: 'INTERNAL', message: 'x', details: [] })).toBe(false);
  });
});

describe('finding a DomainError behind a boundary', () => {
  it('finds it in an ApplicationFailure-like cause chain', () => {
    const data = seatUnavailable(['3A']).toJSON();
    const workflowFailure = {
      message: 'Workflow execution failed',
      cause: { message: 'activity failed', cause: { type: 'SEAT_UNAVAILABLE', details: [data] } },
    };
    const found = findDomainError(workflowFailure);
    expect(found).toBeInstanceOf(DomainError);
    expect(found?.code).toBe('SEAT_UNAVAILABLE');
    expect(found?.details).toEqual({ seatNumbers: ['3A'] });
  });

  it('returns the error itself, or its data form', () => {
    const error = holdExpired('2026-11-01T09:15:00.000Z');
    expect(findDomainError(error)).toBe(error);
    expect(findDomainError(error.toJSON())?.code).toBe('HOLD_EXPIRED');
    expect(findDomainError(new Error('plain', { cause: error }))).toBe(error);
  });

  it('turns anything else into a generic INTERNAL that leaks nothing', () => {
    const converted = toDomainError(new Error('relation "bookings" does not exist'));
    expect(converted.code).toBe('INTERNAL');
    expect(converted.message).toBe('An internal error occurred');
    expect(findDomainError('a string')).toBeUndefined();
    expect(findDomainError(undefined)).toBeUndefined();
  });
});

describe('error helpers', () => {
  it.each<[string, DomainError, ErrorCode, string]>([
    ['one seat', seatUnavailable(['3A']), 'SEAT_UNAVAILABLE', 'Seat 3A is not available'],
    ['two seats', seatUnavailable(['3A', '3B']), 'SEAT_UNAVAILABLE', 'Seats 3A, 3B are not available'],
    [
      'state conflict',
      bookingStateConflict('EXPIRED', 'cancel'),
      'BOOKING_STATE_CONFLICT',
      'Cannot cancel a booking in status EXPIRED',
    ],
    [
      'state conflict with reason',
      bookingStateConflict('CONFIRMED', 'update', 'changes closed'),
      'BOOKING_STATE_CONFLICT',
      'Cannot change a booking in status CONFIRMED: changes closed',
    ],
    [
      'hold expired',
      holdExpired('2026-11-01T09:15:00.000Z'),
      'HOLD_EXPIRED',
      'The seat hold expired at 2026-11-01T09:15:00.000Z',
    ],
    ['not found', notFound('Booking', 'abc'), 'NOT_FOUND', 'Booking abc was not found'],
    [
      'payment declined',
      paymentDeclined('insufficient funds'),
      'PAYMENT_DECLINED',
      'The payment was declined: insufficient funds',
    ],
    [
      'version mismatch',
      versionMismatch(2, 3),
      'VERSION_MISMATCH',
      'The booking is at version 3, the request expected 2',
    ],
    [
      'key reused',
      idempotencyKeyReused(),
      'IDEMPOTENCY_KEY_REUSED',
      'This idempotency key was already used with a different request',
    ],
    [
      'key in use',
      idempotencyKeyInUse(2),
      'IDEMPOTENCY_KEY_IN_USE',
      'A request with this idempotency key is still in progress',
    ],
    ['unauthenticated', unauthenticated(), 'UNAUTHENTICATED', 'A valid bearer token is required'],
    [
      'permission denied',
      permissionDenied(),
      'PERMISSION_DENIED',
      'The caller may not perform this operation',
    ],
    [
      'payload too large',
      payloadTooLarge(65536),
      'PAYLOAD_TOO_LARGE',
      'The request body exceeds 65536 bytes',
    ],
    ['rate limited', rateLimited(5), 'RATE_LIMITED', 'Too many requests'],
    ['unavailable', unavailable(), 'UNAVAILABLE', 'The service is temporarily unavailable'],
    ['internal', internalError(), 'INTERNAL', 'An internal error occurred'],
  ])('%s', (_name, error, code, message) => {
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
  });

  it('carries Retry-After seconds for retryable codes', () => {
    expect(rateLimited(5).details).toEqual({ retryAfterSeconds: 5 });
    expect(idempotencyKeyInUse(2).details).toEqual({ retryAfterSeconds: 2 });
    expect(unavailable('database down', 3).details).toEqual({ retryAfterSeconds: 3 });
  });
});

describe('error details and data forms', () => {
  it('carries the facts a client acts on in details', () => {
    expect(holdExpired('2026-11-01T09:15:00.000Z').details).toEqual({
      holdExpiresAt: '2026-11-01T09:15:00.000Z',
    });
    expect(notFound('Booking', 'abc').details).toEqual({ resource: 'Booking', id: 'abc' });
    expect(paymentDeclined('insufficient funds').details).toEqual({ declineReason: 'insufficient funds' });
    expect(versionMismatch(2, 3).details).toEqual({ expectedVersion: 2, currentVersion: 3 });
    expect(payloadTooLarge(65536).details).toEqual({ limitBytes: 65536 });
  });

  it('leaves empty violation lists and details out of the data form', () => {
    expect(internalError().toJSON()).toStrictEqual({
      code: 'INTERNAL',
      message: 'An internal error occurred',
    });
  });

  it('accepts data only when every field violation has a string field and a string message', () => {
    const data = (fieldViolations: unknown) => ({ code: 'VALIDATION_FAILED', message: 'x', fieldViolations });
    const good = { field: 'trip_id', message: 'must be a UUID' };
    expect(isDomainErrorData(data([good]))).toBe(true);
    expect(isDomainErrorData(data([good, { field: 1, message: 'x' }]))).toBe(false);
    expect(isDomainErrorData(data([{ field: 'trip_id', message: 2 }]))).toBe(false);
    expect(isDomainErrorData(data([null]))).toBe(false);
  });
});

describe('walking cause chains', () => {
  function wrapped(error: unknown, levels: number): unknown {
    let current = error;
    for (let level = 0; level < levels; level += 1) current = { message: `level ${level}`, cause: current };
    return current;
  }

  it('looks past a details list without domain data to the cause', () => {
    const failure = { details: ['not a domain error'], cause: notFound('Booking', 'abc').toJSON() };
    expect(findDomainError(failure)?.code).toBe('NOT_FOUND');
  });

  it('looks ten levels deep and no further', () => {
    const data = notFound('Booking', 'abc').toJSON();
    expect(findDomainError(wrapped(data, 9))?.code).toBe('NOT_FOUND');
    expect(findDomainError(wrapped(data, 10))).toBeUndefined();
  });

  it('ends on a cause chain that loops', () => {
    const looping: { message: string; cause?: unknown } = { message: 'loop' };
    looping.cause = looping;
    expect(findDomainError(looping)).toBeUndefined();
    expect(toDomainError(looping).code).toBe('INTERNAL');
  });
});
