// PostgreSQL's error codes (SQLSTATE) this project acts on, and the one test of a driver error against them.

export const postgresErrorCodes = {
  uniqueViolation: '23505',
  exclusionViolation: '23P01',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  invalidTextRepresentation: '22P02',
  deadlockDetected: '40P01',
  serializationFailure: '40001',
  lockNotAvailable: '55P03',
  queryCanceled: '57014',
} as const;

export type PostgresErrorCode = (typeof postgresErrorCodes)[keyof typeof postgresErrorCodes];

interface PostgresError {
  code?: unknown;
  constraint?: unknown;
}

/** True when `error` is PostgreSQL's `code`, raised by `constraint` when one is named. */
export function isPostgresError(error: unknown, code: PostgresErrorCode, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code: errorCode, constraint: errorConstraint } = error as PostgresError;
  return errorCode === code && (constraint === undefined || errorConstraint === constraint);
}
