// Lifecycle rows "create, seats free", "create, a seat taken" and "create after the trip was cancelled".
import { condition, isCancellation, uuid4, workflowInfo } from '@temporalio/workflow';
import type { BookingState } from '../domain/booking';
import { toDomainError } from '../domain/errors';
import { zeroMoney } from '../domain/money';
import { openBooking } from './booking-opening';
import type { BookingSaga } from './booking-saga';
import { domainFailure } from './failures';
import type { BookingWorkflowInput } from './shared';

const releaseHeldSeats = 'release the booking seats';

/**
 * When the booking opens and its hold starts: the workflow's start, which is in its history. The first workflow
 * task's time differs between its attempts, but a lost attempt may already have stored the booking and its holds
 * (worker or server gone before the task completed), so every attempt opens the booking as the first stored it.
 */
function openingTime(): Date {
  return workflowInfo().startTime;
}

/**
 * The caller's passenger ids, from the input: a lost first workflow task may have stored the passengers already,
 * and its retry may draw random numbers in another order. Only a start without them draws them here.
 */
function openingPassengerIds(input: BookingWorkflowInput): readonly string[] {
  return input.passengerIds ?? input.passengers.map(() => uuid4());
}

/**
 * "create, seats free": priced and held, PENDING_PAYMENT. "create, a seat taken" and "create after the trip was
 * cancelled" (the database refuses the hold): the seats are released and the request ends with no booking. The
 * application layer validated the request before starting the workflow.
 */
export async function reserveSeatsOrFail(saga: BookingSaga): Promise<boolean> {
  try {
    saga.state = openBooking(saga.input, openingPassengerIds(saga.input), openingTime());
  } catch (error) {
    return saga.endWithoutBooking(toDomainError(error));
  }
  saga.showTransition();
  saga.compensations.add(releaseHeldSeats, (undo) => saga.steps.releaseSeats(undo.revision));
  try {
    // The first reservation writes the booking row and its holds in one transaction: all or nothing.
    const { passengers, holdExpiresAt, version } = saga.booking;
    await saga.steps.reserveSeats(passengers, holdExpiresAt, version, saga.legs, saga.booking);
  } catch (error) {
    if (isCancellation(error)) throw error;
    await saga.releaseSeatsAndRefund(zeroMoney(saga.booking.price.total.currency), 'not-booked');
    return saga.endWithoutBooking(toDomainError(error));
  }
  saga.seatsHeld = true;
  return true;
}

/** The CreateBooking update's answer; a repeated create (same request id) gets the same answer as the first. */
export async function answerCreateBooking(saga: BookingSaga): Promise<BookingState> {
  await condition(() => saga.seatsHeld || saga.notBooked !== undefined);
  if (saga.notBooked !== undefined) throw domainFailure(saga.notBooked);
  return saga.booking;
}
