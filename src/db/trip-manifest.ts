// A trip's passenger manifest from the read model, by boarding stop and seat, and what boarding looks up first.
import type { Knex } from 'knex';
import type { BoardingStatus } from '../domain/boarding';
import type { FareClass } from '../domain/booking';
import { isUuid } from '../domain/validation';
import { readPage, type KeysetListing, type PageWindow, type RowPage } from './paging';

/** A passenger row of the manifest, names still encrypted. */
export interface ManifestRow {
  passenger_id: string;
  booking_id: string;
  first_name: string;
  last_name: string;
  seat_number: string;
  fare_class: FareClass;
  boarding_position: number;
  boarding_stop: string;
  alighting_stop: string;
  boarding_status: BoardingStatus;
  boarded_at: Date | null;
  boarded_stop: string | null;
}

/** Where a manifest page stopped: boarding stop's position on the route, seat, passenger. */
export interface ManifestPosition {
  boardingPosition: number;
  seatNumber: string;
  passengerId: string;
}

export const manifestListing: KeysetListing<ManifestRow, ManifestPosition> = {
  name: 'trip-manifest',
  positionOf: (row) => ({
    boardingPosition: row.boarding_position,
    seatNumber: row.seat_number,
    passengerId: row.passenger_id,
  }),
  readPosition(value) {
    const position = value as Partial<ManifestPosition> | null;
    if (
      typeof position !== 'object' ||
      position === null ||
      !Number.isSafeInteger(position.boardingPosition) ||
      typeof position.seatNumber !== 'string' ||
      !/^[1-9][0-9]?[A-F]$/.test(position.seatNumber) ||
      !isUuid(position.passengerId)
    ) {
      return undefined;
    }
    return {
      boardingPosition: position.boardingPosition as number,
      seatNumber: position.seatNumber,
      passengerId: position.passengerId,
    };
  },
};

/** Bookings whose passengers travel or travelled, or were booked and cancelled: never unpaid or lapsed holds. */
const manifestBookingStatuses = ['CONFIRMED', 'COMPLETED', 'CANCELLED'] as const;

/**
 * The trip's passengers in boarding order: by the boarding stop's position on the route, then seat and id.
 * Bookings made before segments board at the route's origin and alight at its destination.
 */
function manifestQuery(database: Knex, tripId: string, after?: ManifestPosition): Knex.QueryBuilder {
  const boardingPosition = database.raw("COALESCE((booking.segment ->> 'boardingPosition')::integer, 0)");
  const query = database('passengers as passenger')
    .join('bookings as booking', 'booking.id', 'passenger.booking_id')
    .join('trips as trip', 'trip.id', 'booking.trip_id')
    .join('routes as route', 'route.id', 'trip.route_id')
    .where('booking.trip_id', tripId)
    .whereIn('booking.status', manifestBookingStatuses)
    .select(
      'passenger.id as passenger_id',
      'passenger.booking_id',
      'passenger.first_name',
      'passenger.last_name',
      'passenger.seat_number',
      'passenger.fare_class',
      database.raw(`${boardingPosition.toQuery()} AS boarding_position`),
      database.raw(
        "COALESCE(booking.segment ->> 'boardingStopCode', route.origin_stop_code) AS boarding_stop",
      ),
      database.raw(
        "COALESCE(booking.segment ->> 'alightingStopCode', route.destination_stop_code) AS alighting_stop",
      ),
      'passenger.boarding_status',
      'passenger.boarded_at',
      'passenger.boarded_stop',
    )
    .orderByRaw(`${boardingPosition.toQuery()}, passenger.seat_number, passenger.id`);
  if (after !== undefined) {
    query.whereRaw(`(${boardingPosition.toQuery()}, passenger.seat_number, passenger.id) > (?, ?, ?::uuid)`, [
      after.boardingPosition,
      after.seatNumber,
      after.passengerId,
    ]);
  }
  return query;
}

/** The page of the trip's manifest the window asks for, in boarding order. */
export function readManifestPage(
  database: Knex,
  tripId: string,
  window: PageWindow<ManifestRow, ManifestPosition>,
): Promise<RowPage<ManifestRow>> {
  return readPage(window, manifestQuery(database, tripId, window.after));
}

export async function tripExists(database: Knex, tripId: string): Promise<boolean> {
  return (await database('trips').where({ id: tripId }).first('id')) !== undefined;
}

/** The ticket as issued: whether it was revoked and why; undefined when no ticket has this id. */
export async function findTicketRevocation(
  database: Knex,
  ticketId: string,
): Promise<{ revokedReason: string | null } | undefined> {
  if (!isUuid(ticketId)) return undefined;
  const row: { revoked_reason: string | null } | undefined = await database('tickets')
    .where({ id: ticketId })
    .first('revoked_reason');
  return row === undefined ? undefined : { revokedReason: row.revoked_reason };
}

/** A passenger's recorded boarding, for a booking whose workflow has ended. */
export async function findPassengerBoarding(
  database: Knex,
  passengerId: string,
): Promise<{ status: BoardingStatus; boardedAt: Date | null; boardedStop: string | null } | undefined> {
  const row: Pick<ManifestRow, 'boarding_status' | 'boarded_at' | 'boarded_stop'> | undefined =
    await database('passengers')
      .where({ id: passengerId })
      .first('boarding_status', 'boarded_at', 'boarded_stop');
  return row === undefined
    ? undefined
    : { status: row.boarding_status, boardedAt: row.boarded_at, boardedStop: row.boarded_stop };
}
