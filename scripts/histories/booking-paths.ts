// The booking paths recorded one history each: a trip that departs during the recording, and a segment change.
import type { Actor } from '../../src/domain/actor';
import {
  confirmPaymentUpdate,
  recordBoardingUpdate,
  requestCancellationSignal,
  updateBookingUpdate,
  bookingWorkflowType,
  type CancelBookingRequest,
} from '../../src/workflows/shared';
import type { bookingWorkflow } from '../../src/workflows/booking';
import { createTrip, bookingRequest, type TestTrip } from '../../test/support/trips';
import {
  bookingHandle,
  inputLike,
  startDirectly,
  startOptionsFor,
  type LifecycleRow,
  type RecordingContext,
} from './recording';

export interface BookingPath {
  path: string;
  rows: LifecycleRow[];
  /** Returns the booking id whose workflow history it produced. */
  run(context: RecordingContext, customer: Actor, trip: TestTrip): Promise<string>;
}

/** A trip that departs this soon and arrives a minute later, so its bookings run to completion while recording. */
export const departingTripOptions = {
  seatCount: 28,
  premiumRows: 1,
  departureInMs: 20_000,
  durationMinutes: 1,
};

const extraPassenger = {
  firstName: 'Rui',
  lastName: 'Costa',
  email: 'rui@example.com',
  seatNumber: '4A',
  fareClass: 'STANDARD' as const,
};

/** Paths on the departing trip; each uses seats of its own. */
export const departingTripPaths: Record<string, BookingPath> = {
  'confirmed-boarded-and-no-show-then-completed': {
    path: 'two passengers (email and SMS), paid, tickets issued; one boards at the boarding stop, the other becomes a no-show at the grace end (the standard rule refunds nothing, booking-no-show sent); completed at the arrival',
    rows: ['create', 'payment-approved', 'boarding-scan', 'no-shows', 'completed'],
    async run({ saga }, customer, trip) {
      const request = bookingRequest(trip, ['2A', '2B'], { contactPhone: '+351912345678' });
      const booking = await saga.application.createBooking(customer, request);
      await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
      await bookingHandle(saga, booking.id).executeUpdate(recordBoardingUpdate, {
        args: [
          {
            passengerId: booking.passengers[0].id,
            stopCode: trip.stopCodes[0],
            boardedAt: new Date().toISOString(),
            actorId: customer.userId,
            deviceId: 'bus-17',
          },
        ],
      });
      return booking.id;
    },
  },
  'no-show-refunded-then-completed': {
    path: 'a fare whose no-show rule gives half back: paid, tickets issued, nobody boards; at the grace end RefundPayment of half the fare and booking-no-show; completed',
    rows: ['create', 'payment-approved', 'no-shows', 'completed'],
    async run({ saga }, customer, trip) {
      const template = await saga.application.createBooking(customer, bookingRequest(trip, ['2C']));
      const input = await inputLike(saga, template.id, ['2D']);
      await saga.application.cancelBooking(customer, template.id, {});
      const bookingId = await startDirectly(saga, {
        ...input,
        refundRule: { ...input.refundRule, noShowRefundPercent: 50 },
      });
      await bookingHandle(saga, bookingId).executeUpdate(confirmPaymentUpdate, {
        args: [{ paymentToken: 'tok_visa' }],
      });
      return bookingId;
    },
  },
  'declined-then-confirmed-then-completed': {
    path: 'a declined payment (the attempt recorded), then an approved one; no-show; completed',
    rows: ['create', 'payment-declined', 'payment-approved', 'no-shows', 'completed'],
    async run({ saga }, customer, trip) {
      const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['3A']));
      await saga.application
        .confirmPayment(customer, booking.id, { paymentToken: 'tok_chargeDeclined' })
        .catch(() => undefined);
      await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
      return booking.id;
    },
  },
  'transient-gateway-failure-then-completed': {
    path: 'ProcessPayment loses the gateway answer once and is retried; no-show; completed',
    rows: ['create', 'payment-approved', 'no-shows', 'completed'],
    async run({ saga }, customer, trip) {
      const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['3B']));
      await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_timeoutOnce' });
      return booking.id;
    },
  },
  'changed-while-pending-and-confirmed-then-completed': {
    path: 'a seat change while pending; paid; a passenger added and details edited (the difference charged, tickets issued), an upgrade (charged) and a downgrade (refunded), each replacing tickets; a change to a taken seat fails and its new hold is released (the change undone); no-show; completed',
    rows: ['create', 'change', 'payment-approved', 'no-shows', 'completed'],
    async run({ saga }, customer, trip) {
      const { application } = saga;
      await application.createBooking(customer, bookingRequest(trip, ['4C']));
      const booking = await application.createBooking(customer, bookingRequest(trip, ['3C']));
      const [passenger] = booking.passengers;
      await application.updateBooking(customer, booking.id, {
        seatChanges: [{ passengerId: passenger.id, seatNumber: '3D' }],
      });
      await application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
      await application.updateBooking(customer, booking.id, {
        addPassengers: [extraPassenger],
        passengerUpdates: [{ passengerId: passenger.id, lastName: 'Costa' }],
      });
      await application.updateBooking(customer, booking.id, {
        seatChanges: [{ passengerId: passenger.id, seatNumber: '1C', fareClass: 'PREMIUM' }],
      });
      await application.updateBooking(customer, booking.id, {
        seatChanges: [{ passengerId: passenger.id, seatNumber: '4B', fareClass: 'STANDARD' }],
      });
      // Straight to the workflow: the application would refuse the taken seat before sending the change.
      await bookingHandle(saga, booking.id)
        .executeUpdate(updateBookingUpdate, {
          args: [{ changes: { seatChanges: [{ passengerId: passenger.id, seatNumber: '4C' }] } }],
        })
        .catch(() => undefined);
      return booking.id;
    },
  },
  'passenger-cancelled-then-completed': {
    path: 'three passengers, paid, tickets issued; one cancelled (CancelPassengers): ReleaseSeats of their seat on every leg, RefundPayment of their share by the fare rule, the booking recorded without them, IssueTickets revokes their ticket, passengers-cancelled; no-shows; completed',
    rows: ['create', 'payment-approved', 'cancel-passengers', 'no-shows', 'completed'],
    async run({ saga }, customer, trip) {
      const booking = await saga.application.createBooking(
        customer,
        bookingRequest(trip, ['7A', '7B', '7C']),
      );
      await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
      await saga.application.cancelPassengers(customer, booking.id, {
        passengerIds: [booking.passengers[1].id],
        reason: 'Ill',
      });
      return booking.id;
    },
  },
  'hold-expired': {
    path: 'never paid: the hold timer fires, ReleaseSeats, booking-expired',
    rows: ['create', 'hold-expired'],
    async run({ shortHold }, customer, trip) {
      return (await shortHold.createBooking(customer, bookingRequest(trip, ['4D']))).id;
    },
  },
  'cancelled-while-pending': {
    path: 'cancelled before payment: ReleaseSeats',
    rows: ['create', 'cancel-pending'],
    async run({ saga }, customer, trip) {
      const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['5A']));
      await saga.application.cancelBooking(customer, booking.id, { reason: 'Plans changed' });
      return booking.id;
    },
  },
  'cancelled-after-confirmation-with-refund': {
    path: 'paid, tickets issued, then cancelled: RefundPayment by the fare rule, ReleaseSeats, tickets revoked, booking-cancelled',
    rows: ['create', 'payment-approved', 'cancel-confirmed'],
    async run({ saga }, customer, trip) {
      const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['5B']));
      await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_mastercard' });
      await saga.application.cancelBooking(customer, booking.id, {});
      return booking.id;
    },
  },
  'seat-unavailable-not-booked': {
    path: 'a start that lost its seat to another booking: ReserveSeats refused, ReleaseSeats, no booking (SEAT_UNAVAILABLE)',
    rows: ['create-seat-taken'],
    async run({ saga }, customer, trip) {
      // The application refuses a taken seat before starting a workflow; a start that lost the race looks like this.
      const holder = await saga.application.createBooking(customer, bookingRequest(trip, ['5C']));
      return startDirectly(saga, await inputLike(saga, holder.id, ['5C']));
    },
  },
  'cancelled-while-being-created': {
    path: 'a cancel that came with the start (the RequestCancellation signal), applied once the seats are held: ReleaseSeats',
    rows: ['create', 'cancel-while-being-made'],
    async run({ saga }, customer, trip) {
      const template = await saga.application.createBooking(customer, bookingRequest(trip, ['5D']));
      const input = await inputLike(saga, template.id, ['6A']);
      await saga.client.workflow.signalWithStart<typeof bookingWorkflow, [CancelBookingRequest]>(
        bookingWorkflowType,
        {
          ...startOptionsFor(input),
          signal: requestCancellationSignal,
          signalArgs: [{ reason: 'Changed my mind' }],
        },
      );
      return input.bookingId;
    },
  },
  'cancelled-by-operator': {
    path: 'paid, then an operator cancels the workflow itself: RefundPayment in full, ReleaseSeats, the workflow ends cancelled',
    rows: ['create', 'payment-approved'],
    async run({ saga }, customer, trip) {
      const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['6B']));
      await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
      await bookingHandle(saga, booking.id).cancel();
      return booking.id;
    },
  },
};

/** A route with two stops between its ends, departing in a week: the segment changes, ended by a cancel. */
export const segmentPath: BookingPath = {
  path: 'whole route, then (pending) the alighting stop moved one stop earlier; paid; then (confirmed) the boarding stop moved one stop later (the difference refunded, tickets replaced) and back to the whole route (the difference charged); cancelled with a refund',
  rows: ['create', 'change-segment', 'payment-approved', 'cancel-confirmed'],
  async run({ saga }, customer) {
    const trip = await createTrip(saga.database, { seatCount: 8, middleStops: 2 });
    const { application } = saga;
    const booking = await application.createBooking(customer, bookingRequest(trip, ['1A']));
    await application.updateBooking(customer, booking.id, { alightingStop: trip.stopCodes[2] });
    await application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
    await application.updateBooking(customer, booking.id, { boardingStop: trip.stopCodes[1] });
    await application.updateBooking(customer, booking.id, {
      boardingStop: trip.stopCodes[0],
      alightingStop: trip.stopCodes[3],
    });
    await application.cancelBooking(customer, booking.id, {});
    return booking.id;
  },
};
