// The trip-cancellation workflow's activities: count and list a trip's open bookings, cancel one through its workflow.
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Knex } from 'knex';
import { bookingStatusOf, countOpenBookingsOfTrip, openBookingsOfTripPage } from '../db/trip-cancellations';
import { isTerminal } from '../domain/lifecycle';
import type { BookingStatus } from '../domain/booking';
import { permanentFailure } from './failures';
import {
  cancelForTripUpdateName,
  type CancelTripBookingInput,
  type CancelTripBookingResult,
  type TripCancellationActivities,
  type TripCancellationAnswer,
  type TripCancellationRequest,
} from './interface';

export interface TripCancellationActivityDependencies {
  database: Knex;
}

export function createTripCancellationActivities(
  dependencies: TripCancellationActivityDependencies,
): TripCancellationActivities {
  const { database } = dependencies;

  /**
   * Asks the booking's own workflow to cancel (CancelForTrip). The update id is the trip cancellation's, so a
   * retried activity joins the update already accepted instead of sending another; and the workflow answers an
   * ended booking with ALREADY_ENDED, so nothing is cancelled or refunded twice.
   */
  async function CancelTripBooking(input: CancelTripBookingInput): Promise<CancelTripBookingResult> {
    const handle = Context.current().client.workflow.getHandle(input.bookingWorkflowId);
    try {
      const answer = await handle.executeUpdate<TripCancellationAnswer, [TripCancellationRequest]>(
        cancelForTripUpdateName,
        { args: [{ tripId: input.tripId, reason: input.reason }], updateId: input.updateId },
      );
      return { outcome: answer.outcome, status: answer.status, refundedMinor: answer.refunded.amountMinor };
    } catch (error) {
      // A workflow that has closed ran its booking to an end (completed, expired, cancelled).
      if (!(error instanceof WorkflowNotFoundError) && !(error instanceof WorkflowUpdateFailedError))
        throw error;
      const status = await bookingStatusOf(database, input.bookingId);
      if (status !== undefined && isTerminal(status as BookingStatus)) {
        return { outcome: 'ALREADY_ENDED', status, refundedMinor: 0 };
      }
      throw permanentFailure(
        'BOOKING_NOT_CANCELLABLE',
        `booking ${input.bookingId} (read model status ${status ?? 'none'}) could not be cancelled: ${
          error instanceof Error ? error.message : String(error)
        }`,
        error,
      );
    }
  }

  return {
    CountOpenTripBookings: ({ tripId }) => countOpenBookingsOfTrip(database, tripId),
    ListOpenTripBookings: (input) => openBookingsOfTripPage(database, input),
    CancelTripBooking,
  };
}
