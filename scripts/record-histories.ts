// Records one finished booking workflow per saga path into test/histories/, for the replay (determinism) test.
//
// Usage: npx tsx scripts/record-histories.ts   (starts its own PostgreSQL and Temporal dev server, like the tests,
// and overwrites test/histories/<path>.json, one file per entry of `bookingPaths` below).
//
// When to re-record: only for a new path (add it to `bookingPaths` and to the coverage table of
// test/integration/saga/replay.test.ts), or after a workflow change made deliberately incompatible because no
// workflow of the old shape can still be running. A change that must stay compatible with running workflows
// keeps the old histories and guards the new behaviour with `patched()`; the replay test, which replays every
// file here against the current bundle, is what tells the two apart. Commit the re-recorded files with the change.
// To keep the shape of bookings open today before such a change, run this at the commit before it and commit its
// files renamed to `<path>.recorded-<date>.json` (as the 2026-11-25 set was) rather than overwriting the old ones.
// The saga environment's Temporal Client and Workers encrypt payloads (createBookingDataConverter), so new
// recordings hold ciphertext under the saga test key; the replay test decodes them with the same converter. The
// files recorded before encryption hold plaintext test data and replay through the codec unchanged.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { BookingApplication } from '../src/application/interface';
import type { Actor } from '../src/domain/actor';
import { bookingWorkflowId } from '../src/workflows/shared';
import { quietTemporalRuntime, startSagaEnvironment, type SagaEnvironment } from '../test/support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../test/support/trips';
import { createCustomer } from '../test/support/users';
import { eventually } from '../test/support/outcomes';

const historiesDirectory = path.resolve(__dirname, '../test/histories');
/** Bookings that must reach COMPLETED depart this soon; every step before departure takes well under it. */
const departureInMs = 12_000;

interface PathContext {
  saga: SagaEnvironment;
  customer: Actor;
  trip: TestTrip;
  shortHold: BookingApplication;
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
    await saga.application.createBooking(customer, bookingRequest(trip, ['4D']));
    await saga.application.createBooking(customer, bookingRequest(trip, ['4D'])).catch(() => undefined);
    const [execution] = await eventually(
      async () => {
        const executions = [];
        for await (const info of saga.client.workflow.list({
          query: `TripId='${trip.tripId}' AND BookingStatus='NOT_BOOKED'`,
        })) {
          executions.push(info);
        }
        return executions;
      },
      (executions) => executions.length === 1,
    );
    return execution.workflowId.replace(/^booking-/, '');
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
  process.stdout.write(`recorded ${name}\n`);
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
    mkdirSync(historiesDirectory, { recursive: true });
    const trip = await createTrip(saga.database, { seatCount: 20, premiumRows: 1, departureInMs });
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
