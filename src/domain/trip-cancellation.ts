// Trip cancellation rules: who may be cancelled, what each passenger gets back, how the progress adds up.
import type { BookingState, Money } from './booking';
import { DomainError, validationFailed } from './errors';
import { netAmountPaid } from './fares';
import { maxCancellationReasonLength } from './validation';

/** A reason of spaces only: no reason at all. */
export const blankTripCancellationReason = 'must not be blank: passengers are told why';

/** What the operator sends: why the trip does not run (passengers read it). */
export interface CancelTripCommand {
  readonly reason: string;
}

export function validateCancelTrip(input: { readonly reason?: unknown } | undefined): CancelTripCommand {
  const raw = input?.reason;
  if (raw === undefined || raw === null) {
    throw validationFailed([{ field: 'reason', message: 'is required: passengers are told why' }]);
  }
  if (typeof raw !== 'string') throw validationFailed([{ field: 'reason', message: 'must be a string' }]);
  const reason = raw.trim();
  if (reason.length === 0) {
    throw validationFailed([{ field: 'reason', message: blankTripCancellationReason }]);
  }
  if ([...reason].length > maxCancellationReasonLength) {
    throw validationFailed([
      { field: 'reason', message: `must be at most ${maxCancellationReasonLength} characters` },
    ]);
  }
  if (reason.includes('\u0000')) {
    throw validationFailed([{ field: 'reason', message: 'must not contain NUL characters' }]);
  }
  return { reason };
}

export type TripStatus = 'SCHEDULED' | 'DEPARTED' | 'CANCELLED';

export interface TripStanding {
  id: string;
  status: TripStatus;
  departureTime: Date;
}

/** Refused with BOOKING_STATE_CONFLICT; `details.tripStatus` tells the trip's status. */
export function tripStateConflict(tripId: string, tripStatus: TripStatus, why: string): DomainError {
  return new DomainError('BOOKING_STATE_CONFLICT', `Trip ${tripId} cannot be cancelled: ${why}`, {
    details: { tripId, tripStatus },
  });
}

/**
 * A trip can be cancelled until it departs; an already cancelled one answers its cancellation again (the
 * caller tells that case apart before asking), so only a departed trip is refused here.
 */
export function assertTripCancellable(trip: TripStanding, now: Date): void {
  if (trip.status === 'DEPARTED' || trip.departureTime.getTime() <= now.getTime()) {
    throw tripStateConflict(
      trip.id,
      'DEPARTED',
      `it departed at ${trip.departureTime.toISOString()}; its bookings complete or are refunded one by one`,
    );
  }
}

/**
 * Why a booking's command or step is refused: its trip was cancelled. It names the operator's reason when known,
 * so a booking cancelled on this path tells its passengers the same reason as the trip's own cancellation.
 */
export function tripCancelledRefusal(tripId: string, reason?: string | null): DomainError {
  const why = reason === undefined || reason === null ? '' : `: ${reason}`;
  return new DomainError('BOOKING_STATE_CONFLICT', `Trip ${tripId} was cancelled by the operator${why}`, {
    details: { tripId, tripStatus: 'CANCELLED', ...(why === '' ? {} : { reason }) },
  });
}

/** The operator's reason a trip-cancelled refusal carries; undefined for one made before refusals named it. */
export function tripCancellationReasonOf(error: { details?: unknown }): string | undefined {
  const reason = (error.details as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

export function isTripCancelledRefusal(error: { code: string; details?: unknown }): boolean {
  const details = error.details as { tripStatus?: unknown } | undefined;
  return error.code === 'BOOKING_STATE_CONFLICT' && details?.tripStatus === 'CANCELLED';
}

/**
 * An operator's cancellation gives back everything captured, whatever the fare's refund rule: the passenger did
 * not choose to stay at home.
 */
export function tripCancellationRefund(state: Pick<BookingState, 'amountPaid' | 'amountRefunded'>): Money {
  return netAmountPaid(state);
}

/** How one booking came out of the trip's cancellation. */
export type BookingCancellationOutcome = 'CANCELLED' | 'ALREADY_ENDED' | 'FAILED';

/** A booking the cancellation could not end, for an operator to act on. */
export interface FailedBookingCancellation {
  bookingId: string;
  reason: string;
}

export interface TripCancellationCounts {
  /** Open bookings when the trip was marked cancelled (no booking can open after that). */
  openAtStart: number;
  cancelled: number;
  alreadyEnded: number;
  failed: number;
}

export function emptyCounts(openAtStart: number): TripCancellationCounts {
  return { openAtStart, cancelled: 0, alreadyEnded: 0, failed: 0 };
}

export function countOutcome(
  counts: TripCancellationCounts,
  outcome: BookingCancellationOutcome,
): TripCancellationCounts {
  switch (outcome) {
    case 'CANCELLED':
      return { ...counts, cancelled: counts.cancelled + 1 };
    case 'ALREADY_ENDED':
      return { ...counts, alreadyEnded: counts.alreadyEnded + 1 };
    case 'FAILED':
      return { ...counts, failed: counts.failed + 1 };
  }
}

export function doneCount(counts: TripCancellationCounts): number {
  return counts.cancelled + counts.alreadyEnded;
}

/**
 * Bookings still to look at: those open at the mark (each listed then, and handled once whatever it does since)
 * less those handled, so a finished cancellation has cancelled + already ended + failed = open at the start.
 */
export function remainingCount(counts: TripCancellationCounts, finished: boolean): number {
  if (finished) return 0;
  return Math.max(0, counts.openAtStart - doneCount(counts) - counts.failed);
}

/** One line for an operator: the Web UI's current details and the workflow list's memo. */
export function progressLine(counts: TripCancellationCounts, finished: boolean): string {
  const state = finished ? 'finished' : 'running';
  return (
    `Trip cancellation ${state}: ${doneCount(counts)} done (${counts.cancelled} cancelled, ` +
    `${counts.alreadyEnded} already ended), ${counts.failed} failed, ${remainingCount(counts, finished)} left ` +
    `of ${counts.openAtStart} open at the start`
  );
}
