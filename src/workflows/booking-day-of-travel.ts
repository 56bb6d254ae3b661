// Lifecycle rows of the day of travel: a ticket scanned at the boarding stop, the no-shows, the arrival.
import { patched } from '@temporalio/workflow';
import type { BookingState, Timestamp } from '../domain/booking';
import {
  assertCanBoard,
  noShowDeadline,
  passengersNotBoarded,
  withBoarding,
  type BoardingRequest,
} from '../domain/boarding';
import { noShowRefund } from '../domain/fares';
import { shouldComplete } from '../domain/lifecycle';
import { seatNumberList } from '../domain/seat-layout';
import { timestampMs, toTimestamp } from '../domain/time';
import { now, type BookingSaga } from './booking-saga';
import { waitForDeadline } from './deadlines';
import { noShowsPatch } from './patches';
import type { RecordBoardingRequest } from './shared';

/** The boarding grace of bookings started without one in their timings (the configuration's default). */
const defaultNoShowGraceMs = 10 * 60_000;

export function checkBoarding(saga: BookingSaga, request: RecordBoardingRequest): BoardingRequest {
  assertCanBoard(saga.booking, request, saga.booking.segment?.boardingStopCode);
  return request;
}

/** "a driver or agent scans a passenger's ticket at the boarding stop": the boarding is recorded. */
export async function recordBoarding(
  saga: BookingSaga,
  request: RecordBoardingRequest,
): Promise<BookingState> {
  const boarding = checkBoarding(saga, request);
  const { boardings } = withBoarding(saga.booking, boarding);
  await saga.publish({ status: saga.next('PASSENGER_BOARDED'), boardings });
  return saga.booking;
}

function noShowDeadlineOf(saga: BookingSaga): Timestamp {
  return noShowDeadline(
    saga.booking.departureTime,
    saga.input.timings.noShowGraceMs ?? defaultNoShowGraceMs,
    saga.arrivalTime,
  );
}

/**
 * "the departure from the boarding stop plus the grace passes": waits out the boarding grace; a booking cancelled
 * or already closed meanwhile has nothing left to record.
 */
async function recordNoShowsAfterGrace(saga: BookingSaga): Promise<void> {
  const open = () => saga.booking.status === 'CONFIRMED' && saga.booking.noShowsRecordedAt === undefined;
  await waitForDeadline(
    open,
    () => noShowDeadlineOf(saga),
    () =>
      saga.customerRequests.inTurn(async () => {
        if (open() && now().getTime() >= timestampMs(noShowDeadlineOf(saga))) await recordNoShows(saga);
      }),
  );
}

/** Every passenger not aboard becomes a no-show: the fare's rule says what they get back, and they are told. */
async function recordNoShows(saga: BookingSaga): Promise<void> {
  const noShows = passengersNotBoarded(saga.booking);
  const refund = noShowRefund(
    saga.booking,
    noShows.map((passenger) => passenger.id),
  );
  await saga.refund(refund);
  await saga.publish({ status: saga.next('BOARDING_CLOSED'), noShowsRecordedAt: toTimestamp(now()) });
  if (noShows.length > 0) await saga.steps.notifyNoShow(saga.booking, seatNumberList(noShows), refund);
}

/** "the bus reaches the alighting stop": COMPLETED, after the no-shows of a confirmed booking are recorded. */
export async function completeAfterDeparture(saga: BookingSaga): Promise<void> {
  // Bookings started before boarding existed complete at the arrival with no command before that timer.
  if (saga.booking.status === 'CONFIRMED' && patched(noShowsPatch)) await recordNoShowsAfterGrace(saga);
  await saga.waitForTimer(
    'DEPARTURE_PASSED',
    () => saga.arrivalTime,
    async () => {
      if (shouldComplete(saga.booking, now())) await saga.publish({ status: saga.next('DEPARTURE_PASSED') });
    },
  );
}
