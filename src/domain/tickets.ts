// E-tickets: what a ticket claims, when it is valid, and which tickets a booking's state issues and revokes.
import type { BookingState, BookingStatus, Timestamp } from './booking';
import { DomainError } from './errors';
import { hourMs, timestampMs } from './time';

/** What a signed ticket asserts; a verifier needs nothing else to let the passenger board. */
export interface TicketClaims {
  readonly ticketId: string;
  readonly bookingId: string;
  readonly passengerId: string;
  readonly tripId: string;
  readonly boardingStopCode: string;
  readonly alightingStopCode: string;
  readonly seatNumber: string;
  /** Boarding opens: some time before the bus leaves the boarding stop. */
  readonly validFrom: Timestamp;
  /** The bus reaches the alighting stop. */
  readonly validUntil: Timestamp;
}

/** Boarding may start this long before the departure from the boarding stop. */
export const ticketValidBeforeDepartureMs = 3 * hourMs;

export function ticketValidity(
  departure: Timestamp,
  arrival: Timestamp,
): Pick<TicketClaims, 'validFrom' | 'validUntil'> {
  return {
    validFrom: new Date(timestampMs(departure) - ticketValidBeforeDepartureMs).toISOString(),
    validUntil: new Date(timestampMs(arrival)).toISOString(),
  };
}

/** Why a verifier refused a ticket; the `reason` detail of TICKET_INVALID. */
export const ticketInvalidReasons = [
  'malformed',
  'signature',
  'unknown_key',
  'expired',
  'not_yet_valid',
] as const;
export type TicketInvalidReason = (typeof ticketInvalidReasons)[number];

const ticketInvalidMessages: Readonly<Record<TicketInvalidReason, string>> = {
  malformed: 'The ticket is not a well-formed signed ticket',
  signature: 'The ticket signature does not verify',
  unknown_key: 'The ticket is signed with a key the ticket key set does not publish',
  expired: 'The ticket has expired: the trip reached its alighting stop',
  not_yet_valid: 'The ticket is not valid yet: boarding has not opened',
};

export function ticketInvalid(reason: TicketInvalidReason): DomainError {
  return new DomainError('TICKET_INVALID', ticketInvalidMessages[reason], { details: { reason } });
}

export function ticketRevoked(ticketId: string, revokedReason: string): DomainError {
  return new DomainError('TICKET_REVOKED', `Ticket ${ticketId} was revoked (${revokedReason})`, {
    details: { ticketId, revokedReason },
  });
}

/** Why a ticket stopped being valid, as stored with the ticket and answered to clients. */
export const ticketRevocationReasons = [
  'SEAT_CHANGED',
  'SEGMENT_CHANGED',
  'PASSENGER_REMOVED',
  'BOOKING_CANCELLED',
  'BOOKING_EXPIRED',
] as const;
export type TicketRevocationReason = (typeof ticketRevocationReasons)[number];

/** The part of a ticket that decides whether it still matches its passenger's place on the bus. */
export interface TicketPlace {
  readonly passengerId: string;
  readonly tripId: string;
  readonly seatNumber: string;
  readonly boardingStopCode: string;
  readonly alightingStopCode: string;
}

/** A ticket as stored, as far as issuing and revoking need it. */
export interface IssuedTicket extends TicketPlace {
  readonly ticketId: string;
  readonly revokedAt?: Timestamp;
}

export interface TicketChanges {
  /** One per passenger whose valid ticket is missing or no longer matches. */
  readonly issue: readonly TicketPlace[];
  readonly revoke: readonly { readonly ticketId: string; readonly reason: TicketRevocationReason }[];
}

/** A booking in these statuses travels: each passenger holds one valid ticket. */
const travellingStatuses: readonly BookingStatus[] = ['CONFIRMED'];

/** The booking's places; `stops` are the boarding and alighting stop codes of its segment (or whole route). */
export function ticketPlaces(
  booking: Pick<BookingState, 'tripId' | 'passengers'>,
  stops: { readonly boardingStopCode: string; readonly alightingStopCode: string },
): TicketPlace[] {
  return booking.passengers.map((passenger) => ({
    passengerId: passenger.id,
    tripId: booking.tripId,
    seatNumber: passenger.seatNumber,
    boardingStopCode: stops.boardingStopCode,
    alightingStopCode: stops.alightingStopCode,
  }));
}

function samePlace(first: TicketPlace, second: TicketPlace): boolean {
  return (
    first.passengerId === second.passengerId &&
    first.tripId === second.tripId &&
    first.seatNumber === second.seatNumber &&
    first.boardingStopCode === second.boardingStopCode &&
    first.alightingStopCode === second.alightingStopCode
  );
}

function replacementReason(old: TicketPlace, place: TicketPlace | undefined): TicketRevocationReason {
  if (place === undefined) return 'PASSENGER_REMOVED';
  if (old.boardingStopCode !== place.boardingStopCode || old.alightingStopCode !== place.alightingStopCode) {
    return 'SEGMENT_CHANGED';
  }
  return 'SEAT_CHANGED';
}

/**
 * What a booking's new state does to its tickets. A confirmed booking gives each passenger one valid ticket
 * for their current seat and segment, revoking any that no longer match; a cancelled or expired booking's
 * valid tickets are all revoked; a completed one keeps its tickets as they were.
 */
export function planTicketChanges(
  status: BookingStatus,
  places: readonly TicketPlace[],
  existing: readonly IssuedTicket[],
): TicketChanges {
  const valid = existing.filter((ticket) => ticket.revokedAt === undefined);
  if (status === 'COMPLETED' || status === 'PENDING_PAYMENT') return { issue: [], revoke: [] };
  if (!travellingStatuses.includes(status)) {
    const reason: TicketRevocationReason = status === 'EXPIRED' ? 'BOOKING_EXPIRED' : 'BOOKING_CANCELLED';
    return { issue: [], revoke: valid.map((ticket) => ({ ticketId: ticket.ticketId, reason })) };
  }
  const revoke = valid
    .filter((ticket) => !places.some((place) => samePlace(ticket, place)))
    .map((ticket) => ({
      ticketId: ticket.ticketId,
      reason: replacementReason(
        ticket,
        places.find((place) => place.passengerId === ticket.passengerId),
      ),
    }));
  const issue = places.filter((place) => !valid.some((ticket) => samePlace(ticket, place)));
  return { issue, revoke };
}

/**
 * The name a ticket id is derived from (a name-based UUID in the activity): the same booking version issues the
 * same ids, so a retried issuance never issues a passenger twice.
 */
export function ticketIdName(bookingId: string, passengerId: string, bookingVersion: number): string {
  return `ticket:${bookingId}:${passengerId}:${bookingVersion}`;
}
