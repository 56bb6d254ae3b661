// Label values of the metrics: read-model transitions, not-booked reasons, refused tokens, refusals, gRPC codes.
import { errors as joseErrors } from 'jose';
import { grpcCodeLabel } from '../../../src/api/grpc/call-metrics';
import { DomainError, rateLimited } from '../../../src/domain/errors';
import {
  bookingTransitionOf,
  notBookedReasonOf,
  openHoldCapRefusalOf,
  tokenFailureReasonOf,
  type StoredBookingState,
} from '../../../src/observability/metrics-labels';
import {
  authenticationFailure,
  createTokenVerifier,
  missingTokenError,
  parseBearerAuthorization,
} from '../../../src/security/token-verifier';

const lastAttempt = '2026-05-01T10:00:00.000Z';

function stored(overrides: Partial<StoredBookingState> = {}): StoredBookingState {
  return { status: 'PENDING_PAYMENT', version: 1, paymentLastAttemptAt: null, ...overrides };
}

function snapshot(
  status: StoredBookingState['status'],
  version: number,
  payment: { status: 'NONE' | 'DECLINED' | 'CAPTURED'; lastAttemptAt?: string } = { status: 'NONE' },
) {
  return { status, version, payment };
}

describe('bookingTransitionOf (what a read-model write did)', () => {
  it('is created when the write made the row', () => {
    expect(bookingTransitionOf(undefined, snapshot('PENDING_PAYMENT', 1))).toBe('created');
  });

  it.each([
    ['CONFIRMED', 'confirmed'],
    ['CANCELLED', 'cancelled'],
    ['EXPIRED', 'expired'],
  ] as const)('is the new status when the write moved PENDING_PAYMENT to %s', (status, transition) => {
    expect(bookingTransitionOf(stored(), snapshot(status, 2))).toBe(transition);
  });

  it('is completed when a confirmed booking departs', () => {
    expect(bookingTransitionOf(stored({ status: 'CONFIRMED', version: 3 }), snapshot('COMPLETED', 4))).toBe(
      'completed',
    );
  });

  it('is nothing for a retried write of the version already stored (a retried activity)', () => {
    expect(bookingTransitionOf(stored({ status: 'CONFIRMED', version: 2 }), snapshot('CONFIRMED', 2))).toBe(
      undefined,
    );
  });

  it('is nothing for an older snapshot arriving late', () => {
    expect(bookingTransitionOf(stored({ status: 'CANCELLED', version: 3 }), snapshot('CONFIRMED', 2))).toBe(
      undefined,
    );
  });

  it('is nothing for a declined payment attempt recorded on a pending booking', () => {
    const declined = snapshot('PENDING_PAYMENT', 2, { status: 'DECLINED', lastAttemptAt: lastAttempt });
    expect(bookingTransitionOf(stored(), declined)).toBe(undefined);
  });

  it('is changed for a newer version with the same status that records no new attempt', () => {
    const afterDecline = stored({ version: 2, paymentLastAttemptAt: new Date(lastAttempt) });
    const changed = snapshot('PENDING_PAYMENT', 3, { status: 'DECLINED', lastAttemptAt: lastAttempt });
    expect(bookingTransitionOf(afterDecline, changed)).toBe('changed');
  });

  it('is changed for a confirmed booking whose change charged the difference', () => {
    const confirmed = stored({
      status: 'CONFIRMED',
      version: 2,
      paymentLastAttemptAt: new Date(lastAttempt),
    });
    const changed = snapshot('CONFIRMED', 3, {
      status: 'CAPTURED',
      lastAttemptAt: '2026-05-02T09:00:00.000Z',
    });
    expect(bookingTransitionOf(confirmed, changed)).toBe('changed');
  });
});

describe('notBookedReasonOf', () => {
  it('names unavailable seats and declined payments as the metric contract does', () => {
    expect(notBookedReasonOf('SEAT_UNAVAILABLE')).toBe('seats_unavailable');
    expect(notBookedReasonOf('PAYMENT_DECLINED')).toBe('payment_declined');
  });

  it('is any other error code in lower case', () => {
    expect(notBookedReasonOf('NOT_FOUND')).toBe('not_found');
    expect(notBookedReasonOf('VALIDATION_FAILED')).toBe('validation_failed');
  });
});

describe('tokenFailureReasonOf', () => {
  it('is missing for a request without a token', () => {
    expect(tokenFailureReasonOf(missingTokenError())).toBe('missing');
  });

  it('is malformed for an Authorization header without the Bearer scheme', () => {
    let error: unknown;
    try {
      parseBearerAuthorization('Basic dXNlcjpwYXNz');
    } catch (thrown) {
      error = thrown;
    }
    expect(tokenFailureReasonOf(error)).toBe('malformed');
  });

  it.each([
    ['expired', 'an expired token', new joseErrors.JWTExpired('"exp" claim timestamp check failed', {})],
    ['bad_signature', 'a bad signature', new joseErrors.JWSSignatureVerificationFailed()],
    [
      'wrong_audience',
      'another audience',
      new joseErrors.JWTClaimValidationFailed('unexpected "aud" claim value', {}, 'aud', 'check_failed'),
    ],
    [
      'wrong_issuer',
      'another issuer',
      new joseErrors.JWTClaimValidationFailed('unexpected "iss" claim value', {}, 'iss', 'check_failed'),
    ],
    ['malformed', 'a malformed token', new joseErrors.JWSInvalid('Invalid Compact JWS')],
    [
      'malformed',
      'claims that are not an object',
      new joseErrors.JWTInvalid('JWT Claims Set must be an object'),
    ],
    [
      'unknown_key',
      'a key id the issuer does not publish',
      Object.assign(new Error('Unable to find a signing key'), { name: 'SigningKeyNotFoundError' }),
    ],
    [
      'other',
      'a disallowed algorithm',
      new joseErrors.JOSEAlgNotAllowed('"alg" (Algorithm) value not allowed'),
    ],
  ] as const)(
    'is %s for %s (jose, the shared verifier), wrapped as the verifier wraps it',
    (reason, _case, cause) => {
      expect(tokenFailureReasonOf(authenticationFailure(cause))).toBe(reason);
    },
  );

  /** An error of koa-jwt's verifying library, which REST sees: recognised by its name, as its classes are not imported. */
  const koaJwtError = (name: string, message: string) => Object.assign(new Error(message), { name });

  it.each([
    ['expired', 'an expired token', koaJwtError('TokenExpiredError', 'jwt expired')],
    ['bad_signature', 'a bad signature', koaJwtError('JsonWebTokenError', 'invalid signature')],
    [
      'wrong_audience',
      'another audience',
      koaJwtError('JsonWebTokenError', 'jwt audience invalid. expected: api'),
    ],
    [
      'wrong_issuer',
      'another issuer',
      koaJwtError('JsonWebTokenError', 'jwt issuer invalid. expected: https://a.example'),
    ],
    ['malformed', 'a malformed token', koaJwtError('JsonWebTokenError', 'jwt malformed')],
    ['other', 'a disallowed algorithm', koaJwtError('JsonWebTokenError', 'invalid algorithm')],
    ['other', 'a token not yet valid', koaJwtError('NotBeforeError', 'jwt not active')],
  ] as const)('is %s for %s (koa-jwt, on REST), wrapped as the verifier wraps it', (reason, _case, cause) => {
    expect(tokenFailureReasonOf(authenticationFailure(cause))).toBe(reason);
  });

  it('tells an expired token by its own message, from jose and koa-jwt alike', () => {
    for (const cause of [
      new joseErrors.JWTExpired('"exp" claim timestamp check failed', {}),
      koaJwtError('TokenExpiredError', 'jwt expired'),
    ]) {
      expect(authenticationFailure(cause).message).toBe('The access token expired');
    }
  });

  it('is malformed for a token that is not a JWT at all, as the shared verifier refuses it', async () => {
    const verifier = createTokenVerifier({
      issuer: 'https://issuer.metrics-tests.example',
      audience: 'bus-booking-api',
      algorithms: ['RS256'],
      clockToleranceSeconds: 0,
      keySetSource: () => Promise.resolve({ keys: [] }),
    });
    const refusal: unknown = await verifier.verifyAccessToken('not-a-jwt').catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'UNAUTHENTICATED', message: 'The access token is invalid' });
    expect(tokenFailureReasonOf(refusal)).toBe('malformed');
  });

  it('is other for a refusal that names no cause (a token without a key id)', () => {
    const refused = new DomainError('UNAUTHENTICATED', 'The access token is invalid', {
      details: { challenge: 'invalid_token' },
    });
    expect(tokenFailureReasonOf(refused)).toBe('other');
  });
});

describe('openHoldCapRefusalOf', () => {
  it('recognises the open-hold cap by the cap it names', () => {
    const capReached = new DomainError('RATE_LIMITED', 'You already hold 5 unpaid bookings', {
      details: { retryAfterSeconds: 60, openHolds: 5, maximumOpenHolds: 5 },
    });
    expect(openHoldCapRefusalOf(capReached)).toBe('open_hold_cap');
  });

  it('leaves the request rate limits to the middleware that enforces them', () => {
    expect(openHoldCapRefusalOf(rateLimited(30))).toBe(undefined);
  });
});

describe('grpcCodeLabel', () => {
  it('names the status code', () => {
    expect(grpcCodeLabel(0)).toBe('OK');
    expect(grpcCodeLabel(5)).toBe('NOT_FOUND');
    expect(grpcCodeLabel(8)).toBe('RESOURCE_EXHAUSTED');
  });

  it('keeps a code grpc-js does not know as its number', () => {
    expect(grpcCodeLabel(99)).toBe('99');
  });
});
