// Tickets as compact JWS (ES256): signed with the ticket key, verified by anyone holding the published key set.
import {
  createLocalJWKSet,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
  type CryptoKey,
  type JSONWebKeySet,
  type JWTPayload,
} from 'jose';
import { DomainError } from '../domain/errors';
import { ticketInvalid, type TicketClaims } from '../domain/tickets';

export const ticketSigningAlgorithm = 'ES256';
/** The JOSE `typ` of a ticket, so no other token signed with a published key passes for one. */
export const ticketTokenType = 'ticket+jwt';
/** The `iss` of every ticket; verifiers reject other issuers. */
export const ticketIssuer = 'urn:bus-booking:tickets';

export interface TicketSigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
}

interface TicketPayload extends JWTPayload {
  booking_id: string;
  trip_id: string;
  boarding_stop: string;
  alighting_stop: string;
  seat: string;
}

const secondsOf = (timestamp: string) => Math.floor(Date.parse(timestamp) / 1000);

/** The ticket's QR payload: `sub` is the passenger, `jti` the ticket, `nbf`/`exp` its validity window. */
export async function signTicket(
  claims: TicketClaims,
  key: TicketSigningKey,
  issuedAt = new Date(),
): Promise<string> {
  const payload: TicketPayload = {
    booking_id: claims.bookingId,
    trip_id: claims.tripId,
    boarding_stop: claims.boardingStopCode,
    alighting_stop: claims.alightingStopCode,
    seat: claims.seatNumber,
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: ticketSigningAlgorithm, kid: key.kid, typ: ticketTokenType })
    .setIssuer(ticketIssuer)
    .setSubject(claims.passengerId)
    .setJti(claims.ticketId)
    .setIssuedAt(Math.floor(issuedAt.getTime() / 1000))
    .setNotBefore(secondsOf(claims.validFrom))
    .setExpirationTime(secondsOf(claims.validUntil))
    .sign(key.privateKey);
}

export interface VerifyTicketOptions {
  /** The instant the ticket is checked at (default: now). */
  readonly now?: Date;
  /** Allowed clock skew between the signer and the verifier (default 60 s). */
  readonly clockToleranceSeconds?: number;
}

function stringClaim(payload: JWTPayload, name: string): string {
  const value = payload[name];
  if (typeof value !== 'string' || value.length === 0) throw ticketInvalid('malformed');
  return value;
}

function claimsOf(payload: JWTPayload): TicketClaims {
  if (typeof payload.nbf !== 'number' || typeof payload.exp !== 'number') throw ticketInvalid('malformed');
  return {
    ticketId: stringClaim(payload, 'jti'),
    passengerId: stringClaim(payload, 'sub'),
    bookingId: stringClaim(payload, 'booking_id'),
    tripId: stringClaim(payload, 'trip_id'),
    boardingStopCode: stringClaim(payload, 'boarding_stop'),
    alightingStopCode: stringClaim(payload, 'alighting_stop'),
    seatNumber: stringClaim(payload, 'seat'),
    validFrom: new Date(payload.nbf * 1000).toISOString(),
    validUntil: new Date(payload.exp * 1000).toISOString(),
  };
}

/** jose's verdict as the one error model: TICKET_INVALID with the reason a scanner can show. */
function asTicketError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (error instanceof joseErrors.JWTExpired) return ticketInvalid('expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'nbf') {
    return ticketInvalid('not_yet_valid');
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return ticketInvalid('signature');
  if (error instanceof joseErrors.JWKSNoMatchingKey) return ticketInvalid('unknown_key');
  return ticketInvalid('malformed');
}

/**
 * The claims of a ticket whose signature one of `jwks`'s keys verifies and whose window contains the instant:
 * no database, no network. Anything else throws TICKET_INVALID (`details.reason`: malformed, signature,
 * unknown_key, expired or not_yet_valid). Revocation is not checked here: compare the id with the trip's
 * revocation list.
 */
export async function verifyTicket(
  token: string,
  jwks: JSONWebKeySet,
  options: VerifyTicketOptions = {},
): Promise<TicketClaims> {
  if (typeof token !== 'string' || token.split('.').length !== 3) throw ticketInvalid('malformed');
  try {
    const { payload } = await jwtVerify(token.trim(), createLocalJWKSet(jwks), {
      algorithms: [ticketSigningAlgorithm],
      issuer: ticketIssuer,
      typ: ticketTokenType,
      currentDate: options.now,
      clockTolerance: options.clockToleranceSeconds ?? 60,
    });
    return claimsOf(payload);
  } catch (error) {
    throw asTicketError(error);
  }
}
