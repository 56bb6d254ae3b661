// Definitions shared by the booking workflow and its callers: task queues, search attributes, workflow ids.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Task queues: workflows, and each activity family, can be served by separately scaled workers. */
export const taskQueues = {
  bookings: 'bookings',
  seats: 'booking-seats',
  payments: 'booking-payments',
  notifications: 'booking-notifications',
} as const;

/** Search attributes operators filter on in the Temporal Web UI (`BookingStatus='CONFIRMED'`). */
export const searchAttributes = {
  bookingStatus: defineSearchAttributeKey('BookingStatus', SearchAttributeType.KEYWORD),
  routeId: defineSearchAttributeKey('RouteId', SearchAttributeType.KEYWORD),
  tripId: defineSearchAttributeKey('TripId', SearchAttributeType.KEYWORD),
  customerId: defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD),
  departureTime: defineSearchAttributeKey('DepartureTime', SearchAttributeType.DATETIME),
} as const;

export const allSearchAttributes = Object.values(searchAttributes);

/** One workflow per booking, found by id from the booking id alone. */
export function bookingWorkflowId(bookingId: string): string {
  return `booking-${bookingId}`;
}
