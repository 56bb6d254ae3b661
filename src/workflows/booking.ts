// The booking saga: one durable workflow per booking, moved through the lifecycle table of docs/design.md.
import {
  allHandlersFinished,
  condition,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { DomainError } from '../domain/errors';
import {
  cancelBooking,
  cancelForTrip,
  cancelOnceBooked,
  checkCancel,
  undoEverythingOnWorkflowCancel,
} from './booking-cancellation';
import { changeBooking, planChange } from './booking-changes';
import { answerCreateBooking, reserveSeatsOrFail } from './booking-creation';
import { checkBoarding, completeAfterDeparture, recordBoarding } from './booking-day-of-travel';
import { cancelPassengers, planPassengersCancel } from './booking-passenger-cancellation';
import {
  checkConfirmPayment,
  confirmPaidSeats,
  confirmPayment,
  holdUntilPaidOrExpired,
} from './booking-payment';
import { BookingSaga } from './booking-saga';
import { asValidationFailure } from './failures';
import { applyPaymentEvent } from './payment-conversation';
import {
  assertSameCreateRequest,
  bookingStateQuery,
  cancelBookingUpdate,
  cancelForTripUpdate,
  cancelPassengersUpdate,
  confirmPaymentUpdate,
  createBookingUpdate,
  createRequestMemoKey,
  paymentEventSignal,
  recordBoardingUpdate,
  requestCancellationSignal,
  updateBookingUpdate,
  type BookingWorkflowInput,
  type BookingWorkflowResult,
  type CancelBookingRequest,
  type CancelPassengersRequest,
  type ConfirmPaymentRequest,
  type CreateBookingRequest,
  type RecordBoardingRequest,
  type TripCancellationRequest,
  type UpdateBookingRequest,
} from './shared';

/**
 * The booking's lifetime, as in the lifecycle table: hold the seats (or end with nothing held), wait for
 * payment until the hold expires, then wait for the arrival. Customers' updates run in between, one at a time.
 */
export async function bookingWorkflow(input: BookingWorkflowInput): Promise<BookingWorkflowResult> {
  const booking = new BookingSaga(input);
  answerCustomerRequests(booking);
  try {
    if (await reserveSeatsOrFail(booking)) {
      await holdUntilPaidOrExpired(booking);
      await completeAfterDeparture(booking);
    }
  } catch (error) {
    if (isCancellation(error)) await undoEverythingOnWorkflowCancel(booking);
    throw error;
  }
  await condition(allHandlersFinished);
  return booking.result();
}

/**
 * How requests arrive: Workflow Updates, each validated first so a forbidden one never lands in history, then run
 * in turn; the RequestCancellation signal of a cancel sent during the create; the processor's PaymentEvent signal;
 * the state query.
 */
function answerCustomerRequests(saga: BookingSaga): void {
  const requests = saga.customerRequests;
  setHandler(bookingStateQuery, () => saga.state);
  setHandler(createBookingUpdate, () => answerCreateBooking(saga), {
    validator: (request?: CreateBookingRequest) => {
      try {
        assertSameCreateRequest(workflowInfo().memo?.[createRequestMemoKey], request);
      } catch (error) {
        throw asValidationFailure(error);
      }
    },
  });
  setHandler(confirmPaymentUpdate, (request) => requests.answer(() => confirmPayment(saga, request)), {
    validator: (request: ConfirmPaymentRequest) =>
      requests.validate(() => checkConfirmPayment(saga, request)),
  });
  setHandler(updateBookingUpdate, (request) => requests.answer(() => changeBooking(saga, request)), {
    validator: (request: UpdateBookingRequest) => requests.validate(() => planChange(saga, request, false)),
  });
  setHandler(cancelBookingUpdate, (request) => requests.answer(() => cancelBooking(saga, request)), {
    validator: (request: CancelBookingRequest) => requests.validate(() => checkCancel(saga, request)),
  });
  setHandler(cancelPassengersUpdate, (request) => requests.answer(() => cancelPassengers(saga, request)), {
    validator: (request: CancelPassengersRequest) =>
      requests.validate(() => planPassengersCancel(saga, request)),
  });
  setHandler(recordBoardingUpdate, (request) => requests.answer(() => recordBoarding(saga, request)), {
    validator: (request: RecordBoardingRequest) => requests.validate(() => checkBoarding(saga, request)),
  });
  setHandler(requestCancellationSignal, (request) => cancelOnceBooked(saga, request));
  // Applied in turn with customer requests, so an event that comes with the payment's own answer waits for it.
  setHandler(paymentEventSignal, (event) =>
    requests.inTurn(() => applyPaymentEvent(saga, event, confirmPaidSeats)),
  );
  setHandler(cancelForTripUpdate, (request) => cancelForTrip(saga, request), {
    validator: (request: TripCancellationRequest) => {
      if (typeof request?.reason !== 'string' || typeof request.tripId !== 'string') {
        throw asValidationFailure(
          new DomainError('VALIDATION_FAILED', 'A trip cancellation names its trip and reason'),
        );
      }
    },
  });
}
