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

/**
 * Payment as a conversation: the charge may stay open (a 3-D Secure challenge), the workflow waits for the
 * processor's PaymentEvent, and an open payment is cancelled before the booking ends without it (money that
 * arrives late keeps the booking on the same seats, or is refunded in full). Only bookings that took this branch
 * ever have an open payment, so the steps that close one need no marker of their own.
 */
export const paymentConversationPatch = 'payment-conversation';

export const bookingPatches = [
  ticketsPatch,
  noShowsPatch,
  tripCancelledPaymentPatch,
  paymentConversationPatch,
] as const;
