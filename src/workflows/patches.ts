// Every patch marker of the booking workflow: a recorded history without one replays the old branch it guards.

/** IssueTickets after each recorded change of a booking that was confirmed. */
export const ticketsPatch = 'issue-tickets';

/** No-shows recorded at the boarding grace's end; bookings started before it complete at the arrival. */
export const noShowsPatch = 'boarding-no-shows';

/**
 * A payment whose seats the database refuses because the trip was cancelled cancels the booking (full refund, the
 * trip's notice) instead of expiring it.
 */
export const tripCancelledPaymentPatch = 'trip-cancelled-payment-cancels';

export const bookingPatches = [ticketsPatch, noShowsPatch, tripCancelledPaymentPatch] as const;
