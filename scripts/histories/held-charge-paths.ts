// Recordings that need a charge held mid-way: a trip cancelled around its bookings' payments, a hold lapsing under one.
import { createTripCancellationApplication } from '../../src/application/trip-cancellations';
import { markTripCancelled } from '../../src/db/trip-cancellations';
import { bookingWorkflowId, bookingWorkflowType, confirmPaymentUpdate } from '../../src/workflows/shared';
import {
  tripCancellationWorkflowId,
  tripCancellationWorkflowType,
} from '../../src/workflows/trip-cancellation-shared';
import { bookingRequest, createTrip } from '../../test/support/trips';
import {
  bookingHandle,
  inputLike,
  sleep,
  startDirectly,
  withChargesHeld,
  type RecordedRun,
  type RecordingContext,
} from './recording';

const tripCancellationReason = 'The bus broke down';

/**
 * One trip with four open bookings, cancelled by its operator: a pending one and a confirmed one the trip's
 * cancellation cancels, one whose payment the mark then refuses, one whose charge was under way at the mark (it
 * cancels itself), and a start after the mark that never holds a seat. The cancellation pages two bookings at a
 * time and continues as new after two, so its history is three runs.
 */
export async function recordTripCancellation(context: RecordingContext): Promise<RecordedRun[]> {
  const { saga, agent } = context;
  const customer = await context.newCustomer();
  const trip = await createTrip(saga.database, { seatCount: 8 });
  const { application } = saga;
  const pending = await application.createBooking(customer, bookingRequest(trip, ['1A']));
  const confirmed = await application.createBooking(customer, bookingRequest(trip, ['1B']));
  await application.confirmPayment(customer, confirmed.id, { paymentToken: 'tok_visa' });
  const paysAfterMark = await application.createBooking(customer, bookingRequest(trip, ['1C']));
  const paysAtMark = await application.createBooking(customer, bookingRequest(trip, ['1D']));

  const heldPayment = await withChargesHeld(saga.database, async (chargeWaiting) => {
    const paying = bookingHandle(saga, paysAtMark.id)
      .executeUpdate(confirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] })
      .catch(() => undefined);
    await chargeWaiting();
    // The application's mark, with the workflow's start left for later (as when a start is lost).
    await markTripCancelled(saga.database, {
      tripId: trip.tripId,
      reason: tripCancellationReason,
      at: new Date(),
      refuse: () => undefined,
    });
    // Wrapped: the payment goes on once the charges are let go.
    return { paying };
  });
  await heldPayment.paying;
  await bookingHandle(saga, paysAfterMark.id)
    .executeUpdate(confirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] })
    .catch(() => undefined);
  const createdAfterMark = await startDirectly(saga, await inputLike(saga, pending.id, ['2A']));

  const cancellations = createTripCancellationApplication({
    database: saga.database,
    temporal: saga.client,
    taskQueues: saga.taskQueueNames,
    tuning: { pageSize: 2, bookingsPerRun: 2, parallelism: 2 },
    answerTimeoutMs: 10_000,
  });
  // A read of a cancellation whose workflow is not there starts it.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const progress = await cancellations.getTripCancellation(agent, trip.tripId);
    if (progress.status === 'FINISHED') break;
    if (Date.now() > deadline) throw new Error('the trip cancellation did not finish');
    await sleep(250);
  }

  const booking = (name: string, bookingId: string, path: string, rows: RecordedRun['rows']) => ({
    name,
    workflowId: bookingWorkflowId(bookingId),
    workflowType: bookingWorkflowType,
    path,
    rows,
    patches: [],
  });
  return [
    booking(
      'trip-cancelled-while-pending',
      pending.id,
      'pending when its trip is cancelled: CancelForTrip, ReleaseSeats, trip-cancelled',
      ['create', 'trip-cancelled'],
    ),
    booking(
      'trip-cancelled-after-confirmation',
      confirmed.id,
      'paid, tickets issued, then its trip is cancelled: CancelForTrip, RefundPayment in full, ReleaseSeats, tickets revoked, trip-cancelled',
      ['create', 'payment-approved', 'trip-cancelled'],
    ),
    booking(
      'payment-after-trip-cancelled',
      paysAfterMark.id,
      'a payment after the mark: ProcessPayment refuses before any money moves (BOOKING_STATE_CONFLICT), the booking stays pending until CancelForTrip cancels it',
      ['create', 'payment-after-trip-cancelled', 'trip-cancelled'],
    ),
    booking(
      'charge-under-way-when-trip-cancelled',
      paysAtMark.id,
      'charged while the mark was made: ConfirmSeats refused, RefundPayment in full, ReleaseSeats, CANCELLED with the trip notice; the later CancelForTrip answers ALREADY_ENDED',
      ['create', 'charge-under-way-at-trip-cancel'],
    ),
    booking(
      'created-after-trip-cancelled-not-booked',
      createdAfterMark,
      'a start after the mark: ReserveSeats refused by the database, ReleaseSeats, no booking (BOOKING_STATE_CONFLICT)',
      ['create-after-trip-cancelled'],
    ),
    ...(await tripCancellationRuns(context, tripCancellationWorkflowId(trip.tripId))),
  ];
}

/** Every run of the trip's cancellation, oldest first, walking back from the latest. */
async function tripCancellationRuns(context: RecordingContext, workflowId: string): Promise<RecordedRun[]> {
  const runIds: string[] = [];
  let runId: string | undefined = (await context.saga.client.workflow.getHandle(workflowId).describe()).runId;
  while (runId !== undefined) {
    runIds.unshift(runId);
    const history = await context.saga.client.workflow.getHandle(workflowId, runId).fetchHistory();
    runId =
      history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runIds.map((id, index) => {
    const last = index === runIds.length - 1;
    return {
      name: `trip-cancellation-run-${index + 1}-${last ? 'finished' : 'continued-as-new'}`,
      workflowId,
      runId: id,
      workflowType: tripCancellationWorkflowType,
      path:
        index === 0
          ? 'the first run: counts the bookings open at the mark, cancels a page of two through their workflows, continues as new'
          : last
            ? 'the last run: an empty page, FINISHED with its counts'
            : 'a carried run: the counts and page position handed over, the next page cancelled, continues as new again',
      rows: [],
      patches: [],
    };
  });
}

/**
 * A payment whose hold lapses while it is charged and whose seat another booking takes meanwhile: ConfirmSeats
 * finds no hold, so the charge is refunded and the seats released (EXPIRED).
 */
export async function recordChargeAfterHoldLapsed(context: RecordingContext): Promise<RecordedRun> {
  const { saga } = context;
  const customer = await context.newCustomer();
  const trip = await createTrip(saga.database, { seatCount: 4 });
  const lapsing = saga.applicationWith({ BOOKING_HOLD_SECONDS: '3' });
  const booking = await lapsing.createBooking(customer, bookingRequest(trip, ['1A']));
  const payment = await withChargesHeld(saga.database, async (chargeWaiting) => {
    const paying = bookingHandle(saga, booking.id)
      .executeUpdate(confirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] })
      .catch(() => undefined);
    await chargeWaiting();
    await sleep(Math.max(0, Date.parse(booking.holdExpiresAt) - Date.now()) + 500);
    await startDirectly(saga, await inputLike(saga, booking.id, ['1A']));
    // Wrapped: the payment goes on once the charges are let go.
    return { paying };
  });
  // The taker holds the seat for the same few seconds and expires on its own.
  await payment.paying;
  return {
    name: 'charged-after-hold-lapsed-refunded',
    workflowId: bookingWorkflowId(booking.id),
    workflowType: bookingWorkflowType,
    path: 'charged while its hold lapsed and another booking took the seat: ConfirmSeats refused (HOLD_EXPIRED), RefundPayment in full, ReleaseSeats, EXPIRED, booking-expired',
    rows: ['create', 'hold-expired'],
    patches: [],
  };
}
