// Baseline workflows: the booking saga's exact shape with no-op activities, and a bare update-with-start.
import {
  allHandlersFinished,
  condition,
  defineUpdate,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  type ActivityOptions,
} from '@temporalio/workflow';
import { searchAttributes } from '../../src/workflows/shared';

/** The no-op saga's four task queues, named like the booking's (`bookings`, `booking-seats`, ...) with a prefix. */
export interface NoopTaskQueues {
  bookings: string;
  seats: string;
  payments: string;
  notifications: string;
}

export function noopTaskQueues(prefix: string): NoopTaskQueues {
  return {
    bookings: `${prefix}-bookings`,
    seats: `${prefix}-seats`,
    payments: `${prefix}-payments`,
    notifications: `${prefix}-notifications`,
  };
}

export interface NoopBookingInput {
  bookingId: string;
  routeId: string;
  tripId: string;
  customerId: string;
  departureTime: string;
  holdDurationMs: number;
  taskQueues: NoopTaskQueues;
}

export interface NoopBookingState {
  bookingId: string;
  status: 'OPENING' | 'PENDING_PAYMENT' | 'CONFIRMED';
  version: number;
}

/** One method per activity the booking calls between create and CONFIRMED; each returns at once. */
export interface NoopActivities {
  ReserveSeats: (input: { bookingId: string; tripId: string }) => Promise<void>;
  ConfirmSeats: (input: { bookingId: string; tripId: string }) => Promise<void>;
  ProcessPayment: (input: { bookingId: string; paymentToken: string }) => Promise<{ transactionId: string }>;
  RecordBooking: (booking: NoopBookingState) => Promise<void>;
  SendEmailNotification: (input: { bookingId: string; template: string }) => Promise<void>;
}

export const noopCreateBookingUpdate = defineUpdate<NoopBookingState>('CreateBooking');
export const noopConfirmPaymentUpdate = defineUpdate<NoopBookingState, [{ paymentToken: string }]>(
  'ConfirmPayment',
);
export const bareUpdate = defineUpdate<string>('Bare');

/** The booking's activity options: the same start-to-close timeout and unlimited retries with backoff. */
function onQueue(taskQueue: string): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s' },
  };
}

/**
 * The booking saga's shape from create to CONFIRMED and on to departure: search attributes and details upserted
 * on every transition, ReserveSeats before the create update answers, ConfirmPayment as an update with a validator
 * running ProcessPayment, ConfirmSeats, RecordBooking and the email in that order, a hold timer and a departure
 * timer. Only the work inside the activities (and the payload encryption) is left out.
 */
export async function noopBookingWorkflow(input: NoopBookingInput): Promise<NoopBookingState> {
  const seats = proxyActivities<Pick<NoopActivities, 'ReserveSeats' | 'ConfirmSeats'>>(
    onQueue(input.taskQueues.seats),
  );
  const payments = proxyActivities<Pick<NoopActivities, 'ProcessPayment'>>(
    onQueue(input.taskQueues.payments),
  );
  const readModel = proxyActivities<Pick<NoopActivities, 'RecordBooking'>>(
    onQueue(input.taskQueues.bookings),
  );
  const notifications = proxyActivities<Pick<NoopActivities, 'SendEmailNotification'>>({
    ...onQueue(input.taskQueues.notifications),
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: 5 },
  });
  const state: NoopBookingState = { bookingId: input.bookingId, status: 'OPENING', version: 1 };
  const showTransition = () => {
    upsertSearchAttributes([
      { key: searchAttributes.bookingStatus, value: state.status },
      { key: searchAttributes.routeId, value: input.routeId },
      { key: searchAttributes.tripId, value: input.tripId },
      { key: searchAttributes.customerId, value: input.customerId },
      { key: searchAttributes.departureTime, value: new Date(input.departureTime) },
    ]);
    setCurrentDetails(`Booking ${input.bookingId}: ${state.status}, version ${state.version}`);
  };

  setHandler(noopCreateBookingUpdate, async () => {
    await condition(() => state.status !== 'OPENING');
    return { ...state };
  });
  setHandler(
    noopConfirmPaymentUpdate,
    async ({ paymentToken }) => {
      await payments.ProcessPayment({ bookingId: input.bookingId, paymentToken });
      await seats.ConfirmSeats({ bookingId: input.bookingId, tripId: input.tripId });
      state.status = 'CONFIRMED';
      state.version += 1;
      showTransition();
      await readModel.RecordBooking({ ...state });
      await Promise.allSettled([
        notifications.SendEmailNotification({ bookingId: input.bookingId, template: 'booking-confirmed' }),
      ]);
      return { ...state };
    },
    {
      validator: (_request: { paymentToken: string }) => {
        if (state.status !== 'PENDING_PAYMENT') throw new Error(`cannot pay a booking in ${state.status}`);
      },
    },
  );

  // Read through a function: the handlers change the status while this body awaits.
  const status = () => state.status;
  showTransition();
  await seats.ReserveSeats({ bookingId: input.bookingId, tripId: input.tripId });
  state.status = 'PENDING_PAYMENT';
  await condition(() => status() !== 'PENDING_PAYMENT', input.holdDurationMs);
  if (status() === 'CONFIRMED') {
    const untilDeparture = Math.max(1, new Date(input.departureTime).getTime() - Date.now());
    await condition(() => status() !== 'CONFIRMED', untilDeparture);
  }
  await condition(allHandlersFinished);
  return state;
}

/** The smallest update-with-start round trip: the update answers at once and the workflow ends. */
export async function bareUpdateWithStartWorkflow(): Promise<void> {
  let answered = false;
  setHandler(bareUpdate, () => {
    answered = true;
    return 'ok';
  });
  await condition(() => answered);
  await condition(allHandlersFinished);
}
