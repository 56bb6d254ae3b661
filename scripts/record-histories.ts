// Records one finished booking workflow per saga path: the release's baseline histories the replay test replays.
//
// Usage: npm run histories:record   (starts its own PostgreSQL and Temporal dev server, like the tests, and
// replaces test/histories/<release>/, the release being package.json's version, with one file per entry of
// `bookingPaths` below).
//
// The versioning policy (docs/design.md): once a release is out, its folder is never re-recorded or deleted; a
// workflow change that alters the commands of a recorded path is guarded with `patched()` so every folder still
// replays. Re-record only the folder of the release being prepared (after bumping the version, that is a new
// folder), and add a path here and to the coverage table of test/integration/saga/replay.test.ts together.
// The saga environment's Temporal Client and Workers encrypt payloads (createBookingDataConverter), so recordings
// hold ciphertext under the saga test key; the replay test decodes them with the same converter.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { bookingStartOptions } from '../src/application/booking-starts';
import type { BookingApplication } from '../src/application/interface';
import type { Actor } from '../src/domain/actor';
import type { bookingWorkflow } from '../src/workflows/booking';
import {
  bookingWorkflowId,
  bookingWorkflowType,
  createBookingUpdate,
  requestCancellationSignal,
  type BookingWorkflowInput,
  type CancelBookingRequest,
} from '../src/workflows/shared';
import { quietTemporalRuntime, startSagaEnvironment, type SagaEnvironment } from '../test/support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../test/support/trips';
import { createCustomer } from '../test/support/users';

const { version: release } = JSON.parse(readFileSync(path.resolve(__dirname, '../package.json'), 'utf8')) as {
  version: string;
};
const historiesDirectory = path.resolve(__dirname, '../test/histories', release);
/**
 * Bookings that must reach COMPLETED depart this soon, on a one-minute trip (they complete on arrival); every step
 * before departure takes well under it.
 */
const departureInMs = 12_000;
const tripMinutes = 1;

interface PathContext {
  saga: SagaEnvironment;
  customer: Actor;
  trip: TestTrip;
  shortHold: BookingApplication;
}

/**
 * The start input of a booking the application made, for a new booking id on `seatNumbers`: how a workflow is
 * started directly for what the application never starts itself (a seat taken between its check and the hold,
 * a cancel that arrives before the start).
 */
async function inputLike(
  saga: SagaEnvironment,
  templateBookingId: string,
  seatNumbers: readonly string[],
): Promise<BookingWorkflowInput> {
  const history = await saga.client.workflow.getHandle(bookingWorkflowId(templateBookingId)).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const template = await decodeFromPayloadsAtIndex<BookingWorkflowInput>(
    saga.client.options.loadedDataConverter,
    0,
    started?.input?.payloads,
  );
  return {
    ...template,
    bookingId: randomUUID(),
    passengers: template.passengers.map((passenger, index) => ({
      ...passenger,
      seatNumber: seatNumbers[index],
    })),
    passengerIds: template.passengers.map(() => randomUUID()),
  };
}

function startOptionsFor(input: BookingWorkflowInput) {
  return bookingStartOptions({ input, requestFingerprint: `recorded-${input.bookingId}` });
}

/** Each path returns the booking id whose workflow history it produced. */
const bookingPaths: Record<string, (context: PathContext) => Promise<string>> = {
  'confirmed-then-completed': async ({ saga, customer, trip }) => {
    const booking = await saga.application.createBooking(
      customer,
      bookingRequest(trip, ['1A', '1B'], { contactPhone: '+351912345678' }),
    );
    await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
    return booking.id;
  },
  'declined-then-confirmed-then-completed': async ({ saga, customer, trip }) => {
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['2A']));
    await saga.application
      .confirmPayment(customer, booking.id, { paymentToken: 'tok_chargeDeclined' })
      .catch(() => undefined);
    await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
    return booking.id;
  },
  'transient-gateway-failure-then-completed': async ({ saga, customer, trip }) => {
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['2B']));
    await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_timeoutOnce' });
    return booking.id;
  },
  'changed-while-pending-and-confirmed-then-completed': async ({ saga, customer, trip }) => {
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['3A']));
    const [passenger] = booking.passengers;
    await saga.application.updateBooking(customer, booking.id, {
      seatChanges: [{ passengerId: passenger.id, seatNumber: '3B' }],
    });
    await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
    await saga.application.updateBooking(customer, booking.id, {
      addPassengers: [
        {
          firstName: 'Rui',
          lastName: 'Costa',
          email: 'rui@example.com',
          seatNumber: '3C',
          fareClass: 'STANDARD',
        },
      ],
      passengerUpdates: [{ passengerId: passenger.id, lastName: 'Costa' }],
    });
    await saga.application.updateBooking(customer, booking.id, {
      seatChanges: [{ passengerId: passenger.id, seatNumber: '1C', fareClass: 'PREMIUM' }],
    });
    await saga.application.updateBooking(customer, booking.id, {
      seatChanges: [{ passengerId: passenger.id, seatNumber: '3D', fareClass: 'STANDARD' }],
    });
    return booking.id;
  },
  'hold-expired': async ({ shortHold, customer, trip }) => {
    const booking = await shortHold.createBooking(customer, bookingRequest(trip, ['4A']));
    return booking.id;
  },
  'cancelled-while-pending': async ({ saga, customer, trip }) => {
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['4B']));
    await saga.application.cancelBooking(customer, booking.id, { reason: 'Plans changed' });
    return booking.id;
  },
  'cancelled-after-confirmation-with-refund': async ({ saga, customer, trip }) => {
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['4C']));
    await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_mastercard' });
    await saga.application.cancelBooking(customer, booking.id, {});
    return booking.id;
  },
  'seat-unavailable-not-booked': async ({ saga, customer, trip }) => {
    // The application refuses a taken seat before starting a workflow; a start that lost the race looks like this.
    const holder = await saga.application.createBooking(customer, bookingRequest(trip, ['4D']));
    const input = await inputLike(saga, holder.id, ['4D']);
    const handle = await saga.client.workflow.start<typeof bookingWorkflow>(
      bookingWorkflowType,
      startOptionsFor(input),
    );
    await handle
      .executeUpdate(createBookingUpdate, { args: [{ requestFingerprint: `recorded-${input.bookingId}` }] })
      .catch(() => undefined);
    return input.bookingId;
  },
  'cancelled-while-being-created': async ({ saga, customer, trip }) => {
    // A cancel that reached Temporal with the start (RequestCancellation), applied once the seats are held.
    const template = await saga.application.createBooking(customer, bookingRequest(trip, ['5B']));
    const input = await inputLike(saga, template.id, ['5C']);
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
  'cancelled-by-operator': async ({ saga, customer, trip }) => {
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['5A']));
    await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
    await saga.client.workflow.getHandle(bookingWorkflowId(booking.id)).cancel();
    return booking.id;
  },
};

async function recordPath(name: string, shared: Omit<PathContext, 'customer'>): Promise<void> {
  // A customer per path: the paths run at once, and one customer's open holds are capped.
  const context = { ...shared, customer: await createCustomer(shared.saga.database, shared.saga.cipher) };
  const bookingId = await bookingPaths[name](context);
  const handle = context.saga.client.workflow.getHandle(bookingWorkflowId(bookingId));
  // Cancelled workflows end with a failure; the history is what matters.
  await handle.result().catch(() => undefined);
  writeFileSync(
    path.join(historiesDirectory, `${name}.json`),
    `${historyToJSON(await handle.fetchHistory())}\n`,
  );
  process.stdout.write(`recorded ${release}/${name}\n`);
}

async function main(): Promise<void> {
  // The jest global setup starts (and its teardown stops) the same servers the integration tests use.
  const setupModule = '../test/support/global-setup.mjs';
  const teardownModule = '../test/support/global-teardown.mjs';
  const { default: startServers } = (await import(setupModule)) as { default: () => Promise<void> };
  const { default: stopServers } = (await import(teardownModule)) as { default: () => Promise<void> };
  quietTemporalRuntime();
  await startServers();
  const saga = await startSagaEnvironment({ environment: { BOOKING_CHANGE_CUTOFF_SECONDS: '0' } });
  try {
    rmSync(historiesDirectory, { recursive: true, force: true });
    mkdirSync(historiesDirectory, { recursive: true });
    const trip = await createTrip(saga.database, {
      seatCount: 20,
      premiumRows: 1,
      departureInMs,
      durationMinutes: tripMinutes,
    });
    const shortHold = saga.applicationWith({ BOOKING_HOLD_SECONDS: '2', BOOKING_CHANGE_CUTOFF_SECONDS: '0' });
    const context = { saga, trip, shortHold };
    await Promise.all(Object.keys(bookingPaths).map((name) => recordPath(name, context)));
  } finally {
    await saga.stop();
    await stopServers();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `recording failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
