// Records the release's workflow histories the replay test replays: one per path of the lifecycle, and a manifest.
//
// Usage: npm run histories:record   (starts its own PostgreSQL and Temporal dev server, like the tests, and writes
// test/histories/<release>/, the release being package.json's version: one file per recorded workflow run and
// index.json, which names each file's workflow type, the path it took, the lifecycle rows and patch markers it
// covers).
//
// A recorded release is never recorded again: when test/histories/<release>/ exists this refuses and changes
// nothing. A new set belongs to a new release: bump "version" in package.json first. The versioning policy is in
// docs/design.md ("Versioning the workflow"). A new lifecycle row or patch marker needs a path here that covers it;
// the replay test fails until the current release's manifest does.
// The saga environment's Temporal Client and Workers encrypt payloads (createBookingDataConverter), so recordings
// hold ciphertext under the saga test key; the replay test decodes them with the same converter.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { bookingWorkflowType } from '../src/workflows/shared';
import { quietTemporalRuntime, startSagaEnvironment, type SagaEnvironment } from '../test/support/saga';
import { createTrip } from '../test/support/trips';
import { actorOf, createCustomer, insertUser } from '../test/support/users';
import {
  departingTripOptions,
  departingTripPaths,
  segmentPath,
  type BookingPath,
} from './histories/booking-paths';
import { recordChargeAfterHoldLapsed, recordTripCancellation } from './histories/held-charge-paths';
import { recordPaymentConversation } from './histories/payment-conversation-paths';
import { recordedWebhookSchedule, recordPartnerWebhookDeliveries } from './histories/partner-webhook-paths';
import type { HistoryEntry, RecordedRun, RecordingContext } from './histories/recording';
import { bookingWorkflowId } from '../src/workflows/shared';

const { version: release } = JSON.parse(readFileSync(path.resolve(__dirname, '../package.json'), 'utf8')) as {
  version: string;
};
const historiesDirectory = path.resolve(__dirname, '../test/histories', release);
const relativeDirectory = path.relative(process.cwd(), historiesDirectory) || historiesDirectory;
/** Written here first, and moved into place only once every history is: a failed recording leaves no release. */
const partialDirectory = `${historiesDirectory}.partial`;

/** Boarding closes this long after the departure, so the no-shows are recorded within the recording. */
const noShowGraceMs = 3000;

async function recordBookingPath(
  context: RecordingContext,
  name: string,
  bookingPath: BookingPath,
  trip: Awaited<ReturnType<typeof createTrip>>,
): Promise<RecordedRun> {
  const bookingId = await bookingPath.run(context, await context.newCustomer(), trip);
  return {
    name,
    workflowId: bookingWorkflowId(bookingId),
    workflowType: bookingWorkflowType,
    path: bookingPath.path,
    rows: bookingPath.rows,
    patches: [],
  };
}

/** The `core_patch` markers of a history: the patched() branches its workflow took. */
function patchMarkersOf(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): string[] {
  const ids = new Set<string>();
  for (const event of history.events ?? []) {
    const marker = event.markerRecordedEventAttributes;
    const data =
      marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    if (data) ids.add((JSON.parse(Buffer.from(data).toString()) as { id: string }).id);
  }
  return [...ids].sort();
}

/** Waits for the run to end and writes its history; the manifest entry names the patches it actually carries. */
async function writeRun(saga: SagaEnvironment, run: RecordedRun): Promise<HistoryEntry> {
  const handle = saga.client.workflow.getHandle(run.workflowId, run.runId);
  // Cancelled and not-booked workflows end with a failure or a refusal; the history is what matters.
  await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  const file = `${run.name}.json`;
  writeFileSync(path.join(partialDirectory, file), `${historyToJSON(history)}\n`);
  process.stdout.write(`recorded ${release}/${file}\n`);
  return {
    file,
    workflowType: run.workflowType,
    path: run.path,
    rows: run.rows,
    patches: patchMarkersOf(history),
  };
}

async function main(): Promise<void> {
  if (existsSync(historiesDirectory)) {
    process.stderr.write(
      `${relativeDirectory} exists: release ${release} is recorded already, and a recorded release is never ` +
        `recorded again (the replay test replays it as long as its bookings may be open). For a new release, ` +
        `bump "version" in package.json and run this again.\n`,
    );
    process.exit(2);
  }
  // The jest global setup starts (and its teardown stops) the same servers the integration tests use.
  const setupModule = '../test/support/global-setup.mjs';
  const teardownModule = '../test/support/global-teardown.mjs';
  const { default: startServers } = (await import(setupModule)) as { default: () => Promise<void> };
  const { default: stopServers } = (await import(teardownModule)) as { default: () => Promise<void> };
  quietTemporalRuntime();
  await startServers();
  // Lapsed holds free their seats at once, so a recording can hand one to another booking.
  const environment = {
    BOOKING_CHANGE_CUTOFF_SECONDS: '0',
    BOOKING_LAPSED_HOLD_GRACE_SECONDS: '0',
    BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100',
    // Partner webhooks go to loopback receivers, and run out of attempts in seconds.
    WEBHOOK_ALLOW_LIST: '127.0.0.1',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: recordedWebhookSchedule,
  };
  const saga = await startSagaEnvironment({ environment, timings: { noShowGraceMs } });
  let stripeSaga: SagaEnvironment | undefined;
  try {
    const agent = actorOf(await insertUser(saga.database, saga.cipher, { roles: ['agent'] }));
    const context: RecordingContext = {
      saga,
      agent,
      newCustomer: () => createCustomer(saga.database, saga.cipher),
      shortHold: saga.applicationWith({ BOOKING_HOLD_SECONDS: '2', BOOKING_CHANGE_CUTOFF_SECONDS: '0' }),
    };
    // Holding the charges stops every payment: these run alone, before the others.
    const runs: RecordedRun[] = [
      ...(await recordTripCancellation(context)),
      await recordChargeAfterHoldLapsed(context),
    ];
    // Open payments need a processor that leaves them open: localstripe, on workers of their own.
    const conversation = await recordPaymentConversation(context, environment);
    stripeSaga = conversation.stripeSaga;
    runs.push(...conversation.runs);
    runs.push(...(await recordPartnerWebhookDeliveries(context)));
    const departing = await createTrip(saga.database, departingTripOptions);
    runs.push(
      ...(await Promise.all([
        recordBookingPath(
          context,
          'segment-changed-while-pending-and-confirmed-then-cancelled',
          segmentPath,
          departing,
        ),
        ...Object.entries(departingTripPaths).map(([name, bookingPath]) =>
          recordBookingPath(context, name, bookingPath, departing),
        ),
      ])),
    );
    rmSync(partialDirectory, { recursive: true, force: true });
    mkdirSync(partialDirectory, { recursive: true });
    const entries = await Promise.all(runs.map((run) => writeRun(saga, run)));
    entries.sort((left, right) => left.file.localeCompare(right.file));
    writeFileSync(
      path.join(partialDirectory, 'index.json'),
      `${JSON.stringify({ release, histories: entries }, null, 2)}\n`,
    );
    renameSync(partialDirectory, historiesDirectory);
  } finally {
    await stripeSaga?.stop();
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
