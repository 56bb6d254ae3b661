// IssueTickets: brings a booking's tickets in line with its state, signing new ones and revoking replaced ones.
import type { Knex } from 'knex';
import { v5 as uuidFromName } from 'uuid';
import { readTripSegmentTerms } from '../db/bookable-trips';
import { applyTicketChanges, issuedTicketOf, readBookingTickets, type NewTicket } from '../db/tickets';
import type { SigningKeyStore } from '../db/signing-key-store';
import type { BookingState } from '../domain/booking';
import { notFound } from '../domain/errors';
import { segmentTimes, wholeRouteSegment } from '../domain/segments';
import { planTicketChanges, ticketIdName, ticketPlaces, ticketValidity } from '../domain/tickets';
import { signTicket } from '../security/ticket-tokens';
import { businessFailure, type TicketActivities } from './interface';

/** Namespace of the name-based ticket ids (RFC 9562 version 5). */
const ticketIdNamespace = '5b0f6a3e-8c1d-4e27-9a4b-2f7d1c9e6b30';

export interface TicketActivityDependencies {
  database: Knex;
  ticketKeys: SigningKeyStore;
}

export function createTicketActivities(dependencies: TicketActivityDependencies): TicketActivities {
  const { database, ticketKeys } = dependencies;
  return {
    async IssueTickets(booking: BookingState): Promise<void> {
      const trip = await readTripSegmentTerms(database, booking.tripId);
      if (trip === undefined) throw businessFailure(notFound('Trip', booking.tripId));
      const segment = booking.segment ?? wholeRouteSegment(trip.stops);
      const places = ticketPlaces(booking, segment);
      const existing = (await readBookingTickets(database, booking.id)).map(issuedTicketOf);
      const changes = planTicketChanges(booking.status, places, existing);
      if (changes.issue.length === 0 && changes.revoke.length === 0) return;
      const { departure, arrival } = segmentTimes(trip.stops, segment, trip.departureTime.toISOString());
      const validity = ticketValidity(departure, arrival);
      const key = changes.issue.length === 0 ? undefined : await ticketKeys.activeKey();
      const issue: NewTicket[] = [];
      for (const place of changes.issue) {
        const claims = {
          ...place,
          ...validity,
          bookingId: booking.id,
          ticketId: uuidFromName(
            ticketIdName(booking.id, place.passengerId, booking.version),
            ticketIdNamespace,
          ),
        };
        issue.push({ claims, bookingVersion: booking.version, token: await signTicket(claims, key!) });
      }
      await applyTicketChanges(database, { issue, revoke: changes.revoke });
    },
  };
}
