// The tickets table: a booking's tickets, their issue and revocation in one transaction, a trip's revocations.
import type { Knex } from 'knex';
import type { RouteStop } from '../domain/segments';
import type { IssuedTicket, TicketClaims, TicketRevocationReason } from '../domain/tickets';
import { routeStopsColumn } from './bookable-trips';

export interface TicketRow {
  id: string;
  booking_id: string;
  passenger_id: string;
  trip_id: string;
  seat: string;
  boarding_stop: string;
  alighting_stop: string;
  booking_version: number;
  token: string;
  valid_from: Date;
  valid_until: Date;
  issued_at: Date;
  revoked_at: Date | null;
  revoked_reason: TicketRevocationReason | null;
}

export interface NewTicket {
  readonly claims: TicketClaims;
  readonly bookingVersion: number;
  readonly token: string;
}

export function issuedTicketOf(row: TicketRow): IssuedTicket {
  return {
    ticketId: row.id,
    passengerId: row.passenger_id,
    tripId: row.trip_id,
    seatNumber: row.seat,
    boardingStopCode: row.boarding_stop,
    alightingStopCode: row.alighting_stop,
    ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at.toISOString() }),
  };
}

/** Every ticket of the booking, valid and revoked, oldest first. */
export async function readBookingTickets(database: Knex, bookingId: string): Promise<TicketRow[]> {
  return database('tickets')
    .where('booking_id', bookingId)
    .orderBy([
      { column: 'issued_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .select<TicketRow[]>('*');
}

/**
 * Revokes first, then issues, so a passenger is never left with two valid tickets (a unique index forbids it).
 * A ticket id issued before (a retried activity) is left as it is.
 */
export async function applyTicketChanges(
  database: Knex,
  changes: {
    readonly issue: readonly NewTicket[];
    readonly revoke: readonly { readonly ticketId: string; readonly reason: TicketRevocationReason }[];
  },
): Promise<void> {
  await database.transaction(async (transaction) => {
    for (const { ticketId, reason } of changes.revoke) {
      await transaction('tickets')
        .where('id', ticketId)
        .whereNull('revoked_at')
        .update({ revoked_at: transaction.fn.now(), revoked_reason: reason });
    }
    if (changes.issue.length === 0) return;
    await transaction('tickets')
      .insert(
        changes.issue.map(({ claims, bookingVersion, token }) => ({
          id: claims.ticketId,
          booking_id: claims.bookingId,
          passenger_id: claims.passengerId,
          trip_id: claims.tripId,
          seat: claims.seatNumber,
          boarding_stop: claims.boardingStopCode,
          alighting_stop: claims.alightingStopCode,
          booking_version: bookingVersion,
          token,
          valid_from: claims.validFrom,
          valid_until: claims.validUntil,
        })),
      )
      .onConflict('id')
      .ignore();
  });
}

export interface TicketRevocation {
  ticketId: string;
  revokedAt: Date;
  reason: TicketRevocationReason;
}

/** The trip's revoked tickets, in the order they were revoked. */
export async function readTripRevocations(database: Knex, tripId: string): Promise<TicketRevocation[]> {
  const rows = await database('tickets')
    .where('trip_id', tripId)
    .whereNotNull('revoked_at')
    .orderBy([
      { column: 'revoked_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .select<Pick<TicketRow, 'id' | 'revoked_at' | 'revoked_reason'>[]>('id', 'revoked_at', 'revoked_reason');
  return rows.map((row) => ({
    ticketId: row.id,
    revokedAt: row.revoked_at!,
    reason: row.revoked_reason!,
  }));
}

export interface TicketTrip {
  routeCode: string;
  departureTime: Date;
  /** The route's stops in travel order, the origin first. */
  stops: RouteStop[];
}

/** The trip as tickets show it: its route's code, its departure from the origin, the route's stops. */
export async function readTicketTrip(database: Knex, tripId: string): Promise<TicketTrip | undefined> {
  const row: { code: string; departure_time: Date; stops: RouteStop[] } | undefined = await database('trips')
    .join('routes', 'routes.id', 'trips.route_id')
    .where('trips.id', tripId)
    .first('routes.code', 'trips.departure_time', routeStopsColumn(database, 'routes'));
  if (row === undefined) return undefined;
  return { routeCode: row.code, departureTime: row.departure_time, stops: row.stops };
}
