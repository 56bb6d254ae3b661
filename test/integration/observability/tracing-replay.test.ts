// A booking started before the workflow was traced keeps its passenger ids when a traced worker replays it.
import { NativeConnection, bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { createActivities, createActivityDependencies } from '../../../src/activities';
import type { BookingState } from '../../../src/domain/booking';
import { createLogger } from '../../../src/logger';
import { createBookingWorkers, bookingWorkflowsPath } from '../../../src/worker/booking-workers';
import { spansWithoutWrappersPatchId, workflowSpansPatchId } from '../../../src/workflows/interceptors';
import { bookingStateQuery, bookingWorkflowId } from '../../../src/workflows/shared';
import { patchIdsOf } from '../../support/patch-markers';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, passengerFor } from '../../support/trips';
import { createCustomer } from '../../support/users';

// Two webpack bundles on two busy cores.
jest.setTimeout(300_000);

let saga: SagaEnvironment;

beforeAll(async () => {
  // The workflow code as it was before tracing: no interceptor modules in the bundle.
  const untracedBundle = await bundleWorkflowCode({
    workflowsPath: bookingWorkflowsPath,
    logger: new DefaultLogger('ERROR'),
  });
  saga = await startSagaEnvironment({ workflowBundle: untracedBundle });
});

afterAll(async () => {
  await saga?.stop();
});

const passengerIds = (state: BookingState | undefined) => state?.passengers.map((passenger) => passenger.id);

it('replays a booking started by untraced workers with the passenger ids it was started with, and marks new runs', async () => {
  const trip = await createTrip(saga.database);
  const customer = await createCustomer(saga.database, saga.cipher);
  const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['1A', '1B']));
  // An added passenger's id is drawn by the workflow, after the random numbers a traced worker would use for spans.
  await saga.application.updateBooking(customer, booking.id, { addPassengers: [passengerFor('1C')] });
  const handle = saga.client.workflow.getHandle(bookingWorkflowId(booking.id));
  const before = await handle.query(bookingStateQuery);
  expect(passengerIds(before)).toHaveLength(3);
  await saga.stopWorkers();

  // Today's workers, the tracing interceptors in their bundle, on the same queues: the next task replays the history.
  const connection = await NativeConnection.connect({ address: saga.config.temporal.address });
  const dependencies = createActivityDependencies(
    saga.config,
    createLogger({ level: 'error', name: 'replay' }),
  );
  const tracedWorkers = await createBookingWorkers({
    config: saga.config,
    connection,
    activities: createActivities(dependencies),
    logger: createLogger({ level: 'error', name: 'replay' }),
    taskQueueNames: saga.taskQueueNames,
  });
  const running = tracedWorkers.run();
  try {
    const after = await handle.query(bookingStateQuery);
    expect(passengerIds(after)).toEqual(passengerIds(before));

    // A booking started now records the patch markers that turn its spans on, made without the package's wrappers.
    const traced = await saga.application.createBooking(customer, bookingRequest(trip, ['2A']));
    const history = await saga.client.workflow.getHandle(bookingWorkflowId(traced.id)).fetchHistory();
    expect(patchIdsOf(history.events)).toEqual(
      expect.arrayContaining([workflowSpansPatchId, spansWithoutWrappersPatchId]),
    );
    // The untraced booking's history, replayed, gained no marker of ours.
    expect(patchIdsOf((await handle.fetchHistory()).events)).not.toContain(workflowSpansPatchId);
  } finally {
    await tracedWorkers.shutdown();
    await running.catch(() => undefined);
    await dependencies.close();
    await connection.close();
  }
});
