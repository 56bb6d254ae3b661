// Label values of the metrics, derived from what the code already knows: read-model writes, errors, token failures.
import { errors as joseErrors } from 'jose';
import type { BookingState, BookingStatus } from '../domain/booking';
import { DomainError, type ErrorCode } from '../domain/errors';
import type { BookingTransition, RefusalReason, TokenFailureReason } from './metrics';

/** The stored booking row a snapshot replaces, as far as telling the transition needs it. */
export interface StoredBookingState {
  status: BookingStatus;
  version: number;
  paymentLastAttemptAt: Date | null;
}

const transitionIntoStatus: Readonly<Partial<Record<BookingStatus, BookingTransition>>> = {
  CONFIRMED: 'confirmed',
  CANCELLED: 'cancelled',
  EXPIRED: 'expired',
  COMPLETED: 'completed',
};

/**
 * The lifecycle transition a read-model write made, or undefined when it made none (a retried write of the same
 * version, an older snapshot arriving late, a declined payment attempt recorded on a pending booking).
 * `previous` is undefined when the write created the row.
 */
export function bookingTransitionOf(
  previous: StoredBookingState | undefined,
  snapshot: Pick<BookingState, 'status' | 'version' | 'payment'>,
): BookingTransition | undefined {
  if (previous === undefined) return 'created';
  if (snapshot.version <= previous.version) return undefined;
  if (snapshot.status !== previous.status) return transitionIntoStatus[snapshot.status];
  // A newer version with the same status is either a change (seats, passengers, details) or a declined attempt.
  const recordsNewAttempt =
    snapshot.payment.lastAttemptAt !== undefined &&
    snapshot.payment.lastAttemptAt !== previous.paymentLastAttemptAt?.toISOString();
  const declinedAttempt = recordsNewAttempt && snapshot.payment.status === 'DECLINED';
  return declinedAttempt ? undefined : 'changed';
}

/** Reasons of not_booked that read better as a phrase than as the error code. */
const notBookedReasons: Readonly<Partial<Record<ErrorCode, string>>> = {
  SEAT_UNAVAILABLE: 'seats_unavailable',
  PAYMENT_DECLINED: 'payment_declined',
};

/** The `reason` label of a not_booked transition: the error code that ended the request, in lower case. */
export function notBookedReasonOf(code: string): string {
  return notBookedReasons[code as ErrorCode] ?? code.toLowerCase();
}

/** The refusal a RATE_LIMITED error reports, when it is the open-hold cap (it names the cap in its details). */
export function openHoldCapRefusalOf(error: unknown): RefusalReason | undefined {
  return error instanceof DomainError &&
    error.code === 'RATE_LIMITED' &&
    error.details.maximumOpenHolds !== undefined
    ? 'open_hold_cap'
    : undefined;
}

function causeOf(error: Error): unknown {
  return (error as { cause?: unknown }).cause;
}

/** What jose's errors (the shared verifier, as gRPC calls it) say about the token. */
function reasonOfJoseError(error: InstanceType<typeof joseErrors.JOSEError>): TokenFailureReason {
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return 'wrong_audience';
    if (error.claim === 'iss') return 'wrong_issuer';
    return 'other';
  }
  if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid) return 'malformed';
  return 'other';
}

/**
 * What the libraries' errors say about the token: jose's by class; koa-jwt's (REST) and jwks-rsa's by name, as
 * koa-jwt's classes are not imported here.
 */
function reasonOfVerificationError(error: unknown): TokenFailureReason | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error instanceof joseErrors.JOSEError) return reasonOfJoseError(error);
  if (error.name === 'TokenExpiredError') return 'expired';
  if (error.name === 'JsonWebTokenError') {
    if (error.message === 'invalid signature') return 'bad_signature';
    if (error.message.startsWith('jwt audience invalid')) return 'wrong_audience';
    if (error.message.startsWith('jwt issuer invalid')) return 'wrong_issuer';
    if (['jwt malformed', 'invalid token', 'jwt must be provided'].includes(error.message))
      return 'malformed';
    return 'other';
  }
  if (error.name === 'NotBeforeError') return 'other';
  if (error.name === 'SigningKeyNotFoundError') return 'unknown_key';
  return undefined;
}

/**
 * Why a token was refused, from the UNAUTHENTICATED error the verifier or the fronts raised: the library error it
 * wraps, else its Bearer challenge (`invalid_request`: no Bearer scheme), else no challenge at all: no token.
 */
export function tokenFailureReasonOf(error: unknown): TokenFailureReason {
  if (!(error instanceof DomainError)) return reasonOfVerificationError(error) ?? 'other';
  const fromCause = reasonOfVerificationError(causeOf(error));
  if (fromCause !== undefined) return fromCause;
  const challenge = error.details.challenge;
  if (challenge === 'invalid_request') return 'malformed';
  if (challenge === undefined && causeOf(error) === undefined) return 'missing';
  return 'other';
}
