// Tickets for boarding tests: a key set of the service's own, another to forge with, and issued ticket rows.
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JSONWebKeySet } from 'jose';
import type { Knex } from 'knex';
import type { BookingView } from '../../src/application/interface';
import { signTicket, ticketSigningAlgorithm, type TicketSigningKey } from '../../src/security/ticket-tokens';

export interface TicketKeys {
  signingKey: TicketSigningKey;
  jwks: JSONWebKeySet;
}

export async function createTicketKeys(kid = `test-${randomUUID()}`): Promise<TicketKeys> {
  const { privateKey, publicKey } = await generateKeyPair(ticketSigningAlgorithm, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return {
    signingKey: { kid, privateKey },
    jwks: { keys: [{ ...publicJwk, kid, alg: ticketSigningAlgorithm, use: 'sig' }] },
  };
}

export interface IssuedTestTicket {
  ticketId: string;
  token: string;
}

/**
 * Signs a ticket for one passenger of a booking, valid from an hour ago until a day from now, and stores it in
 * `tickets` as issuance does; `overrides` bend its claims (another trip, another stop) for refusal tests.
 */
export async function issueTestTicket(
  database: Knex,
  keys: TicketKeys,
  booking: BookingView,
  passengerIndex: number,
  overrides: { tripId?: string; boardingStopCode?: string; store?: boolean } = {},
): Promise<IssuedTestTicket> {
  const passenger = booking.passengers[passengerIndex];
  const ticketId = randomUUID();
  const boardingStopCode = overrides.boardingStopCode ?? booking.segment?.boardingStopCode ?? '';
  const alightingStopCode = booking.segment?.alightingStopCode ?? '';
  const validFrom = new Date(Date.now() - 3_600_000).toISOString();
  const validUntil = new Date(Date.now() + 86_400_000).toISOString();
  const token = await signTicket(
    {
      ticketId,
      bookingId: booking.id,
      passengerId: passenger.id,
      tripId: overrides.tripId ?? booking.tripId,
      boardingStopCode,
      alightingStopCode,
      seatNumber: passenger.seatNumber,
      validFrom,
      validUntil,
    },
    keys.signingKey,
  );
  if (overrides.store !== false) {
    // The test's key signed this ticket, so the passenger's one valid row must be this one, not any issued before.
    await database('tickets')
      .where({ booking_id: booking.id, passenger_id: passenger.id })
      .whereNull('revoked_at')
      .delete();
    await database('tickets').insert({
      id: ticketId,
      booking_id: booking.id,
      passenger_id: passenger.id,
      trip_id: booking.tripId,
      seat: passenger.seatNumber,
      boarding_stop: boardingStopCode,
      alighting_stop: alightingStopCode,
      booking_version: booking.version,
      token,
      valid_from: validFrom,
      valid_until: validUntil,
    });
  }
  return { ticketId, token };
}

export async function revokeTestTicket(database: Knex, ticketId: string): Promise<void> {
  await database('tickets')
    .where({ id: ticketId })
    .update({ revoked_at: new Date(), revoked_reason: 'SEAT_CHANGED' });
}
