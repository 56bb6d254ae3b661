// Determinism: every recorded booking history replays against today's workflow code, and an incompatible edit is caught.
import { expect } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON, JSONToPayload, payloadToJSON } from '@temporalio/common/lib/proto-utils';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { createBookingDataConverter, isEncryptedPayload } from '../../../src/security/temporal-payload-codec';
import { bookingWorkflowsPath } from '../../../src/worker/booking-workers';
import { bookingWorkflowBundleOptions } from '../../../src/worker/workflow-bundle';
import { bundleSagaWorkflows } from '../../support/saga';
import { testSecrets } from '../../support/database';

/** Bundling twice with webpack on two shared cores takes a while; replaying itself is fast. */
jest.setTimeout(180_000);

/**
 * test/histories/<release>/<path>.json: one folder per release, each recorded by `npm run histories:record` when
 * that release was prepared and kept unchanged afterwards (the versioning policy in docs/design.md). Bookings of
 * every released shape may still be open, so every folder must replay; the folder of the version in package.json
 * must cover every path of the lifecycle.
 */
const historiesDirectory = path.resolve(__dirname, '../../histories');
const { version: currentRelease } = JSON.parse(
  readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8'),
) as { version: string };
const timerBeforePaymentModule = path.resolve(
  __dirname,
  '../../support/timer-before-payment-interceptors.ts',
);

/** The JSON `temporal workflow show --output json` and `historyToJSON` write, as far as these checks read it. */
interface Payload {
  data?: string;
}
interface HistoryEventJson {
  eventId: string;
  eventType: string;
  workflowExecutionStartedEventAttributes?: {
    searchAttributes?: { indexedFields?: Record<string, Payload> };
  };
  upsertWorkflowSearchAttributesEventAttributes?: {
    searchAttributes?: { indexedFields?: Record<string, Payload> };
  };
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
  activityTaskStartedEventAttributes?: { scheduledEventId?: string; attempt?: number };
  activityTaskFailedEventAttributes?: { scheduledEventId?: string };
  workflowExecutionUpdateAcceptedEventAttributes?: {
    acceptedRequest?: { input?: { name?: string; args?: { payloads?: Payload[] } } };
  };
  workflowExecutionSignaledEventAttributes?: { signalName?: string };
  markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: Payload[] }> };
}
interface HistoryJson {
  events: HistoryEventJson[];
}

/** What a recorded history shows about the path its booking took. */
interface BookingPath {
  /** BookingStatus search attribute values in order, repeats removed. */
  statuses: string[];
  /** Activities and local activities, in the order they were scheduled or recorded. */
  activities: string[];
  /** Activities that failed (declines) or needed more than one attempt (transient failures). */
  failedActivities: string[];
  retriedActivities: string[];
  updates: string[];
  signals: string[];
  /** Kinds of change the UpdateBooking requests asked for: seatChanges, addPassengers, passengerUpdates. */
  changeKinds: string[];
  closedAs: string;
}

function decoded(payload: Payload | undefined): unknown {
  return payload?.data === undefined ? undefined : JSON.parse(Buffer.from(payload.data, 'base64').toString());
}

function bookingPathOf(history: HistoryJson): BookingPath {
  const scheduledActivities = new Map<string, string>();
  const facts: BookingPath = {
    statuses: [],
    activities: [],
    failedActivities: [],
    retriedActivities: [],
    updates: [],
    signals: [],
    changeKinds: [],
    closedAs: history.events.at(-1)?.eventType ?? '',
  };
  for (const event of history.events) {
    const searchAttributes =
      event.workflowExecutionStartedEventAttributes?.searchAttributes ??
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes;
    const status = decoded(searchAttributes?.indexedFields?.BookingStatus);
    if (typeof status === 'string' && facts.statuses.at(-1) !== status) facts.statuses.push(status);

    const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity !== undefined) {
      scheduledActivities.set(event.eventId, activity);
      facts.activities.push(activity);
    }
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const local = decoded(marker.details?.data?.payloads?.[0]) as { activity_type?: string } | undefined;
      facts.activities.push(local?.activity_type ?? '?');
    }
    const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
    if (signal !== undefined) facts.signals.push(signal);
    const started = event.activityTaskStartedEventAttributes;
    if (started !== undefined && (started.attempt ?? 1) > 1) {
      facts.retriedActivities.push(scheduledActivities.get(started.scheduledEventId ?? '') ?? '?');
    }
    const failed = event.activityTaskFailedEventAttributes;
    if (failed !== undefined) {
      facts.failedActivities.push(scheduledActivities.get(failed.scheduledEventId ?? '') ?? '?');
    }

    const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (update?.name !== undefined) facts.updates.push(update.name);
    if (update?.name === 'UpdateBooking') {
      const request = decoded(update.args?.payloads?.[0]) as { changes?: Record<string, unknown[]> };
      for (const [kind, items] of Object.entries(request.changes ?? {})) {
        if (items.length > 0 && !facts.changeKinds.includes(kind)) facts.changeKinds.push(kind);
      }
    }
  }
  return facts;
}

/** The workers' data converter: the recordings (scripts/record-histories.ts runs the saga environment) are encrypted with the saga test key. */
const dataConverter = createBookingDataConverter({
  encryption: {
    keyring: testSecrets.ENCRYPTION_KEYS,
    activeKeyId: testSecrets.ENCRYPTION_ACTIVE_KEY_ID,
    blindIndexKey: testSecrets.BLIND_INDEX_KEY,
  },
});

/** The history JSON with every encrypted payload decoded, so the path checks below can read arguments. */
async function withDecodedPayloads(node: unknown): Promise<unknown> {
  if (typeof node !== 'object' || node === null) return node;
  if (Array.isArray(node)) return Promise.all(node.map(withDecodedPayloads));
  const record = node as Record<string, unknown>;
  if ('metadata' in record && isEncryptedPayload(JSONToPayload(record))) {
    let payloads = [JSONToPayload(record)];
    for (const codec of [...(dataConverter.payloadCodecs ?? [])].reverse())
      payloads = await codec.decode(payloads);
    return payloadToJSON(payloads[0]);
  }
  const entries = await Promise.all(
    Object.entries(record).map(async ([key, child]) => [key, await withDecodedPayloads(child)] as const),
  );
  return Object.fromEntries(entries);
}

/** `<release>/<path>` of every recorded history, in every release folder. */
const historyFiles = readdirSync(historiesDirectory, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((release) =>
    readdirSync(path.join(historiesDirectory, release.name))
      .filter((file) => file.endsWith('.json'))
      .map((file) => `${release.name}/${file}`),
  )
  .sort();
/** As recorded, for replay. */
const historiesByName = new Map(
  historyFiles.map((file) => [
    file.replace(/\.json$/, ''),
    JSON.parse(readFileSync(path.join(historiesDirectory, file), 'utf8')) as HistoryJson,
  ]),
);
/** With payloads readable, for the path checks. */
const readableHistoriesByName = new Map<string, HistoryJson>();

beforeAll(async () => {
  for (const [name, history] of historiesByName) {
    readableHistoriesByName.set(name, (await withDecodedPayloads(history)) as HistoryJson);
  }
});

function pathOf(name: string): BookingPath {
  const history = readableHistoriesByName.get(name);
  if (history === undefined) {
    throw new Error(`test/histories/${name}.json is missing: record it with npm run histories:record`);
  }
  return bookingPathOf(history);
}

/** Replays every recorded history against `bundle`; the replay error of each, by history name. */
async function replayAll(bundle: WorkflowBundleWithSourceMap): Promise<Map<string, Error | undefined>> {
  const outcomes = new Map<string, Error | undefined>();
  const histories = [...historiesByName].map(([name, history]) => ({
    workflowId: name,
    history: historyFromJSON(history),
  }));
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: bundle, replayName: 'booking-history-replay', dataConverter },
    histories,
  )) {
    outcomes.set(result.workflowId, result.error);
  }
  return outcomes;
}

beforeAll(() => {
  // The edited bundle fails on purpose: core's warnings about each failed workflow task would only be noise.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
});

describe(`the histories of release ${currentRelease} cover every path of the lifecycle`, () => {
  test.each<[string, string, Partial<Record<keyof BookingPath, unknown>>]>([
    [
      'confirmed',
      'confirmed-then-completed',
      {
        statuses: ['PENDING_PAYMENT', 'CONFIRMED', 'COMPLETED'],
        updates: ['CreateBooking', 'ConfirmPayment'],
        activities: expect.arrayContaining(['ProcessPayment', 'ConfirmSeats', 'SendSMSNotification']),
      },
    ],
    [
      'expired',
      'hold-expired',
      {
        statuses: ['PENDING_PAYMENT', 'EXPIRED'],
        updates: ['CreateBooking'],
        activities: ['ReserveSeats', 'ReleaseSeats', 'RecordBooking', 'SendEmailNotification'],
      },
    ],
    [
      'cancelled while pending',
      'cancelled-while-pending',
      {
        statuses: ['PENDING_PAYMENT', 'CANCELLED'],
        updates: ['CreateBooking', 'CancelBooking'],
        activities: ['ReserveSeats', 'ReleaseSeats', 'RecordBooking'],
      },
    ],
    [
      'cancelled while being created (the RequestCancellation signal)',
      'cancelled-while-being-created',
      {
        statuses: ['PENDING_PAYMENT', 'CANCELLED'],
        signals: ['RequestCancellation'],
        updates: [],
        activities: ['ReserveSeats', 'ReleaseSeats', 'RecordBooking'],
      },
    ],
    [
      'cancelled when confirmed, with a refund',
      'cancelled-after-confirmation-with-refund',
      {
        statuses: ['PENDING_PAYMENT', 'CONFIRMED', 'CANCELLED'],
        updates: ['CreateBooking', 'ConfirmPayment', 'CancelBooking'],
        activities: expect.arrayContaining(['ProcessPayment', 'RefundPayment', 'ReleaseSeats']),
      },
    ],
    [
      'declined, then paid',
      'declined-then-confirmed-then-completed',
      {
        statuses: ['PENDING_PAYMENT', 'CONFIRMED', 'COMPLETED'],
        updates: ['CreateBooking', 'ConfirmPayment', 'ConfirmPayment'],
        failedActivities: ['ProcessPayment'],
      },
    ],
    [
      'transient gateway failure, retried',
      'transient-gateway-failure-then-completed',
      { statuses: ['PENDING_PAYMENT', 'CONFIRMED', 'COMPLETED'], retriedActivities: ['ProcessPayment'] },
    ],
    [
      'seat change, add passenger, edit details, while pending and confirmed',
      'changed-while-pending-and-confirmed-then-completed',
      {
        statuses: ['PENDING_PAYMENT', 'CONFIRMED', 'COMPLETED'],
        updates: expect.arrayContaining(['ConfirmPayment', 'UpdateBooking']),
        changeKinds: expect.arrayContaining(['seatChanges', 'addPassengers', 'passengerUpdates']),
        activities: expect.arrayContaining(['ProcessPayment', 'RefundPayment', 'ReleaseSeats']),
      },
    ],
    [
      'not booked: seat taken',
      'seat-unavailable-not-booked',
      {
        statuses: ['PENDING_PAYMENT', 'NOT_BOOKED'],
        updates: ['CreateBooking'],
        activities: ['ReserveSeats', 'ReleaseSeats'],
      },
    ],
    [
      'cancelled by an operator',
      'cancelled-by-operator',
      {
        statuses: ['PENDING_PAYMENT', 'CONFIRMED', 'CANCELLED'],
        activities: expect.arrayContaining(['RefundPayment', 'ReleaseSeats']),
        closedAs: 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
      },
    ],
  ])('%s (%s.json)', (_path, historyName, expected) => {
    expect(pathOf(`${currentRelease}/${historyName}`)).toMatchObject(expected);
  });

  test('every recorded booking ran to its end', () => {
    for (const name of historiesByName.keys()) {
      expect([name, pathOf(name).closedAs]).toEqual([name, expect.stringMatching(/COMPLETED|CANCELED/)]);
    }
  });
});

describe('replay', () => {
  let currentBundle: WorkflowBundleWithSourceMap;

  beforeAll(async () => {
    currentBundle = await bundleSagaWorkflows();
  });

  test('every history in test/histories replays against the current workflow code', async () => {
    const outcomes = await replayAll(currentBundle);

    expect([...outcomes.keys()].sort()).toEqual([...historiesByName.keys()].sort());
    for (const [name, error] of outcomes) expect([name, error]).toEqual([name, undefined]);
  });

  test('a timer added before the charge breaks replay of every history that charged, and only those', async () => {
    // The booking's own interceptors stay: the histories were recorded with their spans.
    const editedBundle = await bundleWorkflowCode({
      workflowsPath: bookingWorkflowsPath,
      ...bookingWorkflowBundleOptions,
      workflowInterceptorModules: [
        ...bookingWorkflowBundleOptions.workflowInterceptorModules,
        timerBeforePaymentModule,
      ],
      logger: new DefaultLogger('ERROR'),
    });
    const charged = [...historiesByName.keys()].filter((name) =>
      pathOf(name).activities.includes('ProcessPayment'),
    );
    expect(charged.length).toBeGreaterThan(0);

    const outcomes = await replayAll(editedBundle);

    for (const [name, error] of outcomes) {
      if (charged.includes(name)) {
        expect([name, error]).toEqual([name, expect.any(DeterminismViolationError)]);
      } else {
        expect([name, error]).toEqual([name, undefined]);
      }
    }
  });
});
