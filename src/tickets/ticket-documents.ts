// The documents of a booking's valid tickets, read from the tickets, the booking's passengers and the trip.
import type { Knex } from 'knex';
import type { SegmentStopTime } from '../domain/booking';
import { DomainError } from '../domain/errors';
import { stopTime } from '../domain/segments';
import { bookingViews, findBookingRow } from '../db/booking-read-model';
import { readBookingTickets, readTicketTrip, type TicketTrip } from '../db/tickets';
import type { FieldCipher } from '../security/field-encryption';
import { renderTicketPdf, type TicketDocument } from './ticket-pdf';

/** A stop of the ticket's trip with the local time the bus is there. */
export function stopOnTrip(trip: TicketTrip, code: string): SegmentStopTime {
  const stop = trip.stops.find((candidate) => candidate.code === code);
  if (stop === undefined) throw new DomainError('INTERNAL', 'A ticket names a stop its route does not have');
  return stopTime(stop, trip.departureTime.toISOString());
}

/** The valid tickets of the booking (of one passenger when given) as documents; none for an unknown booking. */
export async function readTicketDocuments(
  database: Knex,
  cipher: FieldCipher,
  bookingId: string,
  passengerId?: string,
): Promise<TicketDocument[]> {
  const row = await findBookingRow(database, bookingId);
  if (row === undefined) return [];
  const [[booking], tickets, trip] = await Promise.all([
    bookingViews(database, [row], cipher),
    readBookingTickets(database, bookingId),
    readTicketTrip(database, row.trip_id),
  ]);
  if (trip === undefined) return [];
  return tickets.flatMap((ticket) => {
    if (ticket.revoked_at !== null) return [];
    if (passengerId !== undefined && ticket.passenger_id !== passengerId) return [];
    const passenger = booking.passengers.find((candidate) => candidate.id === ticket.passenger_id);
    if (passenger === undefined) return [];
    return [
      {
        ticketId: ticket.id,
        bookingId: ticket.booking_id,
        passengerName: `${passenger.firstName} ${passenger.lastName}`,
        routeCode: trip.routeCode,
        tripId: ticket.trip_id,
        boardingStop: stopOnTrip(trip, ticket.boarding_stop),
        alightingStop: stopOnTrip(trip, ticket.alighting_stop),
        seatNumber: ticket.seat,
        fareClass: passenger.fareClass,
        token: ticket.token,
      },
    ];
  });
}

export interface RenderedTicket {
  readonly fileName: string;
  readonly content: Buffer;
}

export async function renderTicketDocuments(documents: readonly TicketDocument[]): Promise<RenderedTicket[]> {
  return Promise.all(
    documents.map(async (document) => ({
      fileName: `ticket-${document.ticketId}.pdf`,
      content: await renderTicketPdf(document),
    })),
  );
}
