// The saga's ticket step: after each recorded change of a booking that was confirmed, its tickets follow it.
import { patched } from '@temporalio/workflow';
import type { BookingState } from '../domain/booking';
import type { BookingSteps } from './booking-steps';
import { ticketsPatch } from './patches';

/**
 * A confirmed booking's passengers get tickets, a change replaces the ones it invalidates, a cancellation
 * revokes them. A booking never confirmed has none, and a completed one keeps its tickets as they are.
 */
export async function keepTicketsInLine(steps: BookingSteps, booking: BookingState): Promise<void> {
  if (booking.confirmedAt === undefined || booking.status === 'COMPLETED') return;
  if (!patched(ticketsPatch)) return;
  await steps.issueTickets(booking);
}
