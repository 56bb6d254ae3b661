// The tickets both fronts serve: a booking's tickets and their PDFs, the ticket key set, a trip's revocations.
import type { Knex } from 'knex';
import type { Actor } from '../domain/actor';
import type { SegmentStopTime } from '../domain/booking';
import { notFound } from '../domain/errors';
import type { TicketRevocationReason } from '../domain/tickets';
import { validateId } from '../domain/validation';
import type { SigningKeyStore } from '../db/signing-key-store';
import {
  readBookingTickets,
  readTicketTrip,
  readTripRevocations,
  type TicketRevocation,
  type TicketRow,
  type TicketTrip,
} from '../db/tickets';
import { readTicketDocuments, renderTicketDocuments, stopOnTrip } from '../tickets/ticket-documents';
import type { FieldCipher } from '../security/field-encryption';
import type { BookingApplication, BookingView } from './interface';

export type TicketStatus = 'VALID' | 'REVOKED';

export interface TicketView {
  ticketId: string;
  bookingId: string;
  passengerId: string;
  /** Absent for a passenger since removed from the booking. */
  passengerName?: string;
  tripId: string;
  seatNumber: string;
  boardingStop: SegmentStopTime;
  alightingStop: SegmentStopTime;
  status: TicketStatus;
  validFrom: string;
  validUntil: string;
  issuedAt: string;
  revokedAt?: string;
  revokedReason?: TicketRevocationReason;
  /** The compact JWS the QR code carries; absent once revoked. */
  qrPayload?: string;
}

export interface TicketPdf {
  fileName: string;
  content: Buffer;
}

export interface TripRevocationsView {
  tripId: string;
  revocations: TicketRevocation[];
}

export interface TicketApplication {
  /** Readable by whoever may read the booking, answered exactly as getBooking answers otherwise. */
  listTickets(actor: Actor, bookingId: string): Promise<TicketView[]>;
  /** The passenger's valid ticket as a PDF; NOT_FOUND when the passenger holds none. */
  ticketPdf(actor: Actor, bookingId: string, passengerId: string): Promise<TicketPdf>;
  /** The public keys tickets are verified with. */
  ticketKeySet(): Promise<{ keys: object[] }>;
  /** The revoked tickets of a trip, for boarding devices to sync before departure. */
  tripRevocations(actor: Actor, tripId: string): Promise<TripRevocationsView>;
}

export interface TicketApplicationDependencies {
  database: Knex;
  cipher: FieldCipher;
  bookings: Pick<BookingApplication, 'getBooking'>;
  ticketKeys: SigningKeyStore;
}

function ticketView(row: TicketRow, booking: BookingView, trip: TicketTrip): TicketView {
  const passenger = booking.passengers.find((candidate) => candidate.id === row.passenger_id);
  const revoked = row.revoked_at !== null;
  return {
    ticketId: row.id,
    bookingId: row.booking_id,
    passengerId: row.passenger_id,
    ...(passenger === undefined ? {} : { passengerName: `${passenger.firstName} ${passenger.lastName}` }),
    tripId: row.trip_id,
    seatNumber: row.seat,
    boardingStop: stopOnTrip(trip, row.boarding_stop),
    alightingStop: stopOnTrip(trip, row.alighting_stop),
    status: revoked ? 'REVOKED' : 'VALID',
    validFrom: row.valid_from.toISOString(),
    validUntil: row.valid_until.toISOString(),
    issuedAt: row.issued_at.toISOString(),
    ...(revoked ? { revokedAt: row.revoked_at!.toISOString(), revokedReason: row.revoked_reason! } : {}),
    ...(revoked ? {} : { qrPayload: row.token }),
  };
}

export function createTicketApplication(dependencies: TicketApplicationDependencies): TicketApplication {
  const { database, cipher, bookings, ticketKeys } = dependencies;

  async function tripOf(tripId: string): Promise<TicketTrip> {
    const trip = await readTicketTrip(database, tripId);
    if (trip === undefined) throw notFound('Trip', tripId);
    return trip;
  }

  return {
    async listTickets(actor, bookingId) {
      const booking = await bookings.getBooking(actor, bookingId);
      const [trip, rows] = await Promise.all([
        tripOf(booking.tripId),
        readBookingTickets(database, booking.id),
      ]);
      return rows.map((row) => ticketView(row, booking, trip));
    },

    async ticketPdf(actor, bookingId, passengerIdInput) {
      const passengerId = validateId(passengerIdInput, 'passenger_id');
      const booking = await bookings.getBooking(actor, bookingId);
      const documents = await readTicketDocuments(database, cipher, booking.id, passengerId);
      if (documents.length === 0) throw notFound('Ticket', `${booking.id}/${passengerId}`);
      const [rendered] = await renderTicketDocuments(documents);
      return rendered;
    },

    ticketKeySet: () => ticketKeys.publicKeySet(),

    async tripRevocations(_actor, tripIdInput) {
      const tripId = validateId(tripIdInput, 'trip_id');
      await tripOf(tripId);
      return { tripId, revocations: await readTripRevocations(database, tripId) };
    },
  };
}
