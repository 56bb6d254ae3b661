// The recorded histories as the replay tests read them: each release's manifest, and the facts a history shows.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { JSONToPayload, payloadToJSON } from '@temporalio/common/lib/proto-utils';
import { createBookingDataConverter, isEncryptedPayload } from '../../../src/security/temporal-payload-codec';
import { testSecrets } from '../../support/database';

export const historiesDirectory = path.resolve(__dirname, '../../histories');
const repositoryRoot = path.resolve(__dirname, '../../..');

/** A release folder's index.json, which scripts/record-histories.ts writes beside the histories. */
export interface ManifestEntry {
  file: string;
  workflowType: string;
  path: string;
  rows: string[];
  patches: string[];
}

interface Payload {
  data?: string;
}
interface Failure {
  applicationFailureInfo?: { type?: string };
}
interface HistoryEventJson {
  eventId: string;
  eventType: string;
  workflowExecutionStartedEventAttributes?: {
    workflowType?: { name?: string };
    searchAttributes?: { indexedFields?: Record<string, Payload> };
  };
  upsertWorkflowSearchAttributesEventAttributes?: {
    searchAttributes?: { indexedFields?: Record<string, Payload> };
  };
  activityTaskScheduledEventAttributes?: {
    activityType?: { name?: string };
    input?: { payloads?: Payload[] };
  };
  activityTaskStartedEventAttributes?: { scheduledEventId?: string; attempt?: number };
  activityTaskFailedEventAttributes?: { scheduledEventId?: string; failure?: Failure };
  workflowExecutionUpdateAcceptedEventAttributes?: {
    acceptedRequest?: { input?: { name?: string; args?: { payloads?: Payload[] } } };
  };
  workflowExecutionSignaledEventAttributes?: { signalName?: string };
  markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: Payload[] }> };
  workflowExecutionCompletedEventAttributes?: { result?: { payloads?: Payload[] } };
}
export interface HistoryJson {
  events: HistoryEventJson[];
}

/** What a recorded history shows about the path its workflow took. */
export interface HistoryFacts {
  workflowType: string;
  /** BookingStatus search attribute values in order, repeats removed. */
  statuses: string[];
  /** Activities and local activities, in the order they were scheduled or recorded. */
  activities: string[];
  /** `<activity> <failure type>` of each failed activity (declines, refusals). */
  failedActivities: string[];
  /** Activities that needed more than one attempt (transient failures). */
  retriedActivities: string[];
  updates: string[];
  signals: string[];
  /** What the UpdateBooking requests changed: seatChanges, addPassengers, passengerUpdates, boardingStop, ... */
  changeKinds: string[];
  /** Templates of the email notifications sent. */
  notifications: string[];
  /** The patch markers: the patched() branches taken. */
  patches: string[];
  /** The error code of a request that never became a booking. */
  notBookedCode?: string;
  closedAs: string;
}

function decoded(payload: Payload | undefined): unknown {
  return payload?.data === undefined ? undefined : JSON.parse(Buffer.from(payload.data, 'base64').toString());
}

function workflowTypeOf(history: HistoryJson): string {
  return history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
}

export function factsOf(history: HistoryJson): HistoryFacts {
  const scheduled = new Map<string, string>();
  const facts: HistoryFacts = {
    workflowType: workflowTypeOf(history),
    statuses: [],
    activities: [],
    failedActivities: [],
    retriedActivities: [],
    updates: [],
    signals: [],
    changeKinds: [],
    notifications: [],
    patches: [],
    closedAs: history.events.at(-1)?.eventType ?? '',
  };
  const addOnce = (list: string[], item: string) => {
    if (!list.includes(item)) list.push(item);
  };
  for (const event of history.events) {
    const searchAttributes =
      event.workflowExecutionStartedEventAttributes?.searchAttributes ??
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes;
    const status = decoded(searchAttributes?.indexedFields?.BookingStatus);
    if (typeof status === 'string' && facts.statuses.at(-1) !== status) facts.statuses.push(status);

    const activity = event.activityTaskScheduledEventAttributes;
    const activityName = activity?.activityType?.name;
    if (activityName !== undefined) {
      scheduled.set(event.eventId, activityName);
      facts.activities.push(activityName);
      if (activityName === 'SendEmailNotification') {
        const input = decoded(activity?.input?.payloads?.[0]) as { template?: string } | undefined;
        facts.notifications.push(input?.template ?? '?');
      }
    }
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const local = decoded(marker.details?.data?.payloads?.[0]) as { activity_type?: string } | undefined;
      facts.activities.push(local?.activity_type ?? '?');
    }
    if (marker?.markerName === 'core_patch') {
      const patch = decoded(marker.details?.['patch-data']?.payloads?.[0]) as { id?: string } | undefined;
      addOnce(facts.patches, patch?.id ?? '?');
    }
    const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
    if (signal !== undefined) facts.signals.push(signal);
    const started = event.activityTaskStartedEventAttributes;
    if (started !== undefined && (started.attempt ?? 1) > 1) {
      facts.retriedActivities.push(scheduled.get(started.scheduledEventId ?? '') ?? '?');
    }
    const failed = event.activityTaskFailedEventAttributes;
    if (failed !== undefined) {
      const name = scheduled.get(failed.scheduledEventId ?? '') ?? '?';
      facts.failedActivities.push(`${name} ${failed.failure?.applicationFailureInfo?.type ?? 'retryable'}`);
    }
    const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (update?.name !== undefined) facts.updates.push(update.name);
    if (update?.name === 'UpdateBooking') {
      const request = decoded(update.args?.payloads?.[0]) as { changes?: Record<string, unknown> };
      for (const [kind, value] of Object.entries(request.changes ?? {})) {
        if (!Array.isArray(value) || value.length > 0) addOnce(facts.changeKinds, kind);
      }
    }
    const completed = event.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0];
    const result = decoded(completed) as { outcome?: string; error?: { code?: string } } | undefined;
    if (result?.outcome === 'NOT_BOOKED') facts.notBookedCode = result.error?.code;
  }
  facts.patches.sort();
  return facts;
}

const statusAfter = (facts: HistoryFacts, from: string, to: string) =>
  facts.statuses.some((status, index) => status === from && facts.statuses[index + 1] === to);

/**
 * What a history must show to cover each row of the lifecycle table: a manifest that names a row its history
 * does not show fails, and a row added to the table without a check here fails too.
 */
export const rowChecks: Record<string, (facts: HistoryFacts) => boolean> = {
  create: (facts) => facts.statuses[0] === 'PENDING_PAYMENT' && !facts.statuses.includes('NOT_BOOKED'),
  'create-seat-taken': (facts) =>
    facts.notBookedCode === 'SEAT_UNAVAILABLE' && facts.activities.includes('ReleaseSeats'),
  'payment-approved': (facts) =>
    statusAfter(facts, 'PENDING_PAYMENT', 'CONFIRMED') &&
    facts.activities.includes('ProcessPayment') &&
    facts.activities.includes('ConfirmSeats'),
  'payment-declined': (facts) => facts.failedActivities.includes('ProcessPayment PAYMENT_DECLINED'),
  'hold-expired': (facts) =>
    statusAfter(facts, 'PENDING_PAYMENT', 'EXPIRED') &&
    facts.activities.includes('ReleaseSeats') &&
    facts.notifications.includes('booking-expired'),
  'cancel-pending': (facts) =>
    statusAfter(facts, 'PENDING_PAYMENT', 'CANCELLED') && facts.updates.includes('CancelBooking'),
  'cancel-while-being-made': (facts) =>
    facts.signals.includes('RequestCancellation') && facts.statuses.at(-1) === 'CANCELLED',
  'cancel-confirmed': (facts) =>
    statusAfter(facts, 'CONFIRMED', 'CANCELLED') &&
    facts.updates.includes('CancelBooking') &&
    facts.activities.includes('RefundPayment') &&
    facts.notifications.includes('booking-cancelled'),
  'cancel-passengers': (facts) =>
    facts.updates.includes('CancelPassengers') &&
    facts.activities.includes('ReleaseSeats') &&
    facts.notifications.includes('passengers-cancelled'),
  change: (facts) =>
    facts.updates.includes('UpdateBooking') &&
    ['seatChanges', 'addPassengers', 'passengerUpdates'].every((kind) => facts.changeKinds.includes(kind)),
  'change-segment': (facts) =>
    facts.changeKinds.includes('boardingStop') && facts.changeKinds.includes('alightingStop'),
  'boarding-scan': (facts) => facts.updates.includes('RecordBoarding'),
  'no-shows': (facts) =>
    facts.patches.includes('boarding-no-shows') && facts.notifications.includes('booking-no-show'),
  'trip-cancelled': (facts) =>
    facts.updates.includes('CancelForTrip') &&
    facts.statuses.at(-1) === 'CANCELLED' &&
    facts.notifications.includes('trip-cancelled'),
  'payment-after-trip-cancelled': (facts) =>
    facts.failedActivities.includes('ProcessPayment BOOKING_STATE_CONFLICT'),
  'charge-under-way-at-trip-cancel': (facts) =>
    facts.patches.includes('trip-cancelled-payment-cancels') &&
    statusAfter(facts, 'PENDING_PAYMENT', 'CANCELLED') &&
    facts.activities.includes('RefundPayment') &&
    facts.notifications.includes('trip-cancelled'),
  'create-after-trip-cancelled': (facts) => facts.notBookedCode === 'BOOKING_STATE_CONFLICT',
  'payment-requires-action': (facts) =>
    facts.patches.includes('payment-conversation') &&
    facts.updates.includes('ConfirmPayment') &&
    (facts.activities.includes('CheckPayment') || facts.activities.includes('CancelPayment')),
  'payment-action-succeeded': (facts) =>
    facts.signals.includes('PaymentEvent') &&
    facts.activities.includes('CheckPayment') &&
    statusAfter(facts, 'PENDING_PAYMENT', 'CONFIRMED'),
  'payment-action-failed': (facts) =>
    facts.signals.includes('PaymentEvent') &&
    facts.activities.includes('CheckPayment') &&
    facts.activities.filter((activity) => activity === 'ProcessPayment').length >= 2,
  'late-money-kept': (facts) =>
    facts.activities.includes('CancelPayment') &&
    facts.activities.filter((activity) => activity === 'ReserveSeats').length >= 2 &&
    statusAfter(facts, 'PENDING_PAYMENT', 'CONFIRMED'),
  'late-money-refunded': (facts) =>
    facts.activities.includes('CancelPayment') &&
    facts.activities.includes('RefundPayment') &&
    statusAfter(facts, 'PENDING_PAYMENT', 'EXPIRED') &&
    facts.notifications.includes('booking-expired'),
  'cancel-during-payment-action': (facts) =>
    facts.activities.includes('CancelPayment') &&
    facts.updates.includes('CancelBooking') &&
    statusAfter(facts, 'PENDING_PAYMENT', 'CANCELLED'),
  'payment-incident': (facts) =>
    facts.signals.includes('PaymentEvent') && facts.activities.includes('ReportPaymentIncident'),
  completed: (facts) => facts.statuses.at(-1) === 'COMPLETED',
};

/** The row names of the lifecycle table in docs/design.md ("Lifecycle"): its first column. */
export function lifecycleTableRows(): string[] {
  const design = readFileSync(path.join(repositoryRoot, 'docs/design.md'), 'utf8');
  const table = design.slice(design.indexOf('### Lifecycle'), design.indexOf('The table lives in'));
  return [...table.matchAll(/^\| `([a-z-]+)` \|/gm)].map((match) => match[1]);
}

/**
 * Every patch id a `patched(...)` call in src/workflows names: a string, or a constant of src/workflows/patches.ts
 * (imported under its own name).
 */
export function patchIdsInWorkflowCode(patchConstants: Record<string, unknown>): string[] {
  const directory = path.join(repositoryRoot, 'src/workflows');
  const files = readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.ts'),
  );
  const ids = new Set<string>();
  for (const file of files) {
    const source = readFileSync(path.join(directory, file), 'utf8');
    for (const [, argument] of source.matchAll(/\b(?:patched|deprecatePatch)\(\s*([^)]*?)\s*\)/g)) {
      const literal = /^['"]([^'"]+)['"]$/.exec(argument);
      const constant = patchConstants[argument];
      if (literal !== null) ids.add(literal[1]);
      else if (typeof constant === 'string') ids.add(constant);
      else
        throw new Error(
          `src/workflows/${file}: patched(${argument}) names no id of src/workflows/patches.ts`,
        );
    }
  }
  return [...ids].sort();
}

/** The workers' data converter: the recordings hold payloads encrypted with the saga test key. */
export const dataConverter = createBookingDataConverter({
  encryption: {
    keyring: testSecrets.ENCRYPTION_KEYS,
    activeKeyId: testSecrets.ENCRYPTION_ACTIVE_KEY_ID,
    blindIndexKey: testSecrets.BLIND_INDEX_KEY,
  },
});

/** The history JSON with every encrypted payload decoded, so the facts can read arguments. */
export async function withDecodedPayloads(node: unknown): Promise<unknown> {
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

export interface RecordedHistory extends ManifestEntry {
  release: string;
  /** `<release>/<file without .json>`: the replay's workflow id and the test's name. */
  name: string;
  /** False for a history in a folder without a manifest (an incident's download): it only replays. */
  listed: boolean;
  history: HistoryJson;
}

export interface ReleaseFolder {
  entries: RecordedHistory[];
  /** The history files the folder holds. */
  files: string[];
  hasManifest: boolean;
}

/** A release's folder is named by its version; it must carry its manifest. */
export const isReleaseFolder = (name: string) => /^\d+\.\d+\.\d+$/.test(name);

/** Every folder of test/histories with its histories: a release's as its manifest lists them, any other's as found. */
export function readReleases(): Map<string, ReleaseFolder> {
  const releases = new Map<string, ReleaseFolder>();
  for (const release of readdirSync(historiesDirectory, { withFileTypes: true })) {
    if (!release.isDirectory()) continue;
    const folder = path.join(historiesDirectory, release.name);
    const files = readdirSync(folder)
      .filter((file) => file.endsWith('.json') && file !== 'index.json')
      .sort();
    const read = (file: string) => JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as HistoryJson;
    const manifestFile = path.join(folder, 'index.json');
    const hasManifest = existsSync(manifestFile);
    const listedEntries: ManifestEntry[] = hasManifest
      ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as { histories: ManifestEntry[] }).histories
      : files.map((file) => ({
          file,
          workflowType: workflowTypeOf(read(file)),
          path: '',
          rows: [],
          patches: [],
        }));
    const entries = listedEntries.map((entry) => ({
      ...entry,
      release: release.name,
      name: `${release.name}/${entry.file.replace(/\.json$/, '')}`,
      listed: hasManifest,
      history: read(entry.file),
    }));
    releases.set(release.name, { entries, files, hasManifest });
  }
  return releases;
}
