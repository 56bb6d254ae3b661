// Partners' webhook endpoints (soft-deleted, secrets field-encrypted) and the delivery log read from their deliveries.
import type { Knex } from 'knex';
import { isUuid } from '../domain/validation';
import type { FieldCipher } from '../security/field-encryption';
import { readPage, type KeysetListing, type PageWindow, type RowPage } from './paging';

export type EndpointStatus = 'enabled' | 'disabled';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/**
 * Whose endpoints a call may reach: one partner's live ones, or (operators) any, deleted ones included for
 * reading their delivery log. Changes never reach a deleted endpoint, whoever asks.
 */
export type EndpointAccess = { partnerId: string } | { anyPartner: true };

/** An endpoint as it is shown: never its secrets. */
export interface WebhookEndpointRecord {
  id: string;
  partnerId: string;
  url: string;
  description: string;
  eventTypes: string[];
  allBookings: boolean;
  status: EndpointStatus;
  disabledReason: string | null;
  disabledAt: string | null;
  /** When the previous secret stops being signed with; null when there is none. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

interface EndpointRow {
  id: string;
  partner_id: string;
  url: string;
  description: string;
  event_types: string[];
  all_bookings: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  status: EndpointStatus;
  disabled_reason: string | null;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

interface ListedEndpointRow extends EndpointRow {
  /** created_at to the microsecond in UTC, as the page token records it. */
  cursor_created_at: string;
}

const endpointColumns = [
  'id',
  'partner_id',
  'url',
  'description',
  'event_types',
  'all_bookings',
  'previous_secret_expires_at',
  'status',
  'disabled_reason',
  'disabled_at',
  'created_at',
  'updated_at',
  'deleted_at',
] as const;

const iso = (value: Date | null): string | null => (value === null ? null : value.toISOString());

function recordOf(row: Omit<EndpointRow, 'secret' | 'previous_secret'>): WebhookEndpointRecord {
  return {
    id: row.id,
    partnerId: row.partner_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    allBookings: row.all_bookings,
    status: row.status,
    disabledReason: row.disabled_reason,
    disabledAt: iso(row.disabled_at),
    previousSecretExpiresAt: iso(row.previous_secret_expires_at),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    deletedAt: iso(row.deleted_at),
  };
}

const cursorColumn = (table: string) =>
  `to_char(${table}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_created_at`;
const cursorTimestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Where a page stopped, by creation time and id (both listings). */
export interface CreatedPosition {
  createdAt: string;
  id: string;
}

function readCreatedPosition(value: unknown): CreatedPosition | undefined {
  const position = value as Partial<CreatedPosition> | null;
  if (
    typeof position !== 'object' ||
    position === null ||
    typeof position.createdAt !== 'string' ||
    !cursorTimestampPattern.test(position.createdAt) ||
    Number.isNaN(Date.parse(position.createdAt)) ||
    !isUuid(position.id)
  ) {
    return undefined;
  }
  return { createdAt: position.createdAt, id: position.id };
}

/** The reachable, live endpoints a call of this access may change. */
function liveEndpoints(database: Knex | Knex.Transaction, access: EndpointAccess): Knex.QueryBuilder {
  const query = database<EndpointRow>('webhook_endpoints').whereNull('deleted_at');
  if ('partnerId' in access) query.where('partner_id', access.partnerId);
  return query;
}

/** The endpoints a call of this access may read: a partner's live ones, or any for operators. */
function readableEndpoints(database: Knex, access: EndpointAccess): Knex.QueryBuilder {
  return 'partnerId' in access ? liveEndpoints(database, access) : database<EndpointRow>('webhook_endpoints');
}

export interface NewEndpoint {
  id: string;
  partnerId: string;
  url: string;
  description: string;
  eventTypes: readonly string[];
  allBookings: boolean;
  /** The `whsec_…` secret in clear; stored encrypted. */
  secret: string;
}

/**
 * Inserts the endpoint unless its partner already has `maximum` live ones (then undefined). One partner's creates
 * are serialised by a transaction lock, so concurrent ones cannot pass the cap together.
 */
export async function insertEndpoint(
  database: Knex,
  cipher: FieldCipher,
  endpoint: NewEndpoint,
  maximum: number,
): Promise<WebhookEndpointRecord | undefined> {
  return database.transaction(async (transaction) => {
    await transaction.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [
      `webhook-endpoints:${endpoint.partnerId}`,
    ]);
    const counted = await liveEndpoints(transaction, { partnerId: endpoint.partnerId })
      .count<{ count: string }[]>({ count: '*' })
      .first();
    if (Number(counted?.count ?? 0) >= maximum) return undefined;
    const [row] = await transaction('webhook_endpoints')
      .insert({
        id: endpoint.id,
        partner_id: endpoint.partnerId,
        url: endpoint.url,
        description: endpoint.description,
        event_types: [...endpoint.eventTypes],
        all_bookings: endpoint.allBookings,
        secret: cipher.encrypt(endpoint.secret),
      })
      .returning<EndpointRow[]>(endpointColumns);
    return recordOf(row);
  });
}

export async function findEndpoint(
  database: Knex,
  access: EndpointAccess,
  endpointId: string,
): Promise<WebhookEndpointRecord | undefined> {
  const row = await readableEndpoints(database, access)
    .where({ id: endpointId })
    .first<EndpointRow | undefined>(endpointColumns);
  return row === undefined ? undefined : recordOf(row);
}

export const endpointListing: KeysetListing<ListedEndpointRow, CreatedPosition> = {
  name: 'webhook-endpoints',
  positionOf: (row) => ({ createdAt: row.cursor_created_at, id: row.id }),
  readPosition: readCreatedPosition,
};

/** Live endpoints, oldest first: one partner's, or every partner's for operators. */
export async function readEndpointPage(
  database: Knex,
  access: EndpointAccess,
  window: PageWindow<ListedEndpointRow, CreatedPosition>,
): Promise<RowPage<WebhookEndpointRecord>> {
  const query = liveEndpoints(database, access)
    .select([...endpointColumns, database.raw(cursorColumn('webhook_endpoints'))])
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ]);
  if (window.after !== undefined) {
    query.whereRaw('(created_at, id) > (?::timestamptz, ?::uuid)', [window.after.createdAt, window.after.id]);
  }
  const page = await readPage(window, query);
  return { ...page, rows: page.rows.map(recordOf) };
}

export interface EndpointChanges {
  url?: string;
  eventTypes?: readonly string[];
  description?: string;
  enabled?: boolean;
}

/** Why an endpoint its owner (or an operator) switched off is disabled. */
export const disabledByRequestReason = 'disabled by request';

/** Applies the changes to a live endpoint; undefined when the access reaches none. `before` is the endpoint as it was. */
export async function updateEndpoint(
  database: Knex,
  access: EndpointAccess,
  endpointId: string,
  changes: EndpointChanges,
  now: Date,
): Promise<{ before: WebhookEndpointRecord; after: WebhookEndpointRecord } | undefined> {
  return database.transaction(async (transaction) => {
    const current = await liveEndpoints(transaction, access)
      .where({ id: endpointId })
      .forUpdate()
      .first<EndpointRow | undefined>(endpointColumns);
    if (current === undefined) return undefined;
    const update: Record<string, unknown> = { updated_at: now };
    if (changes.url !== undefined) update.url = changes.url;
    if (changes.eventTypes !== undefined) update.event_types = [...changes.eventTypes];
    if (changes.description !== undefined) update.description = changes.description;
    if (changes.enabled === true && current.status === 'disabled') {
      Object.assign(update, { status: 'enabled', disabled_reason: null, disabled_at: null });
    }
    if (changes.enabled === false && current.status === 'enabled') {
      Object.assign(update, {
        status: 'disabled',
        disabled_reason: disabledByRequestReason,
        disabled_at: now,
      });
    }
    const [row] = await transaction('webhook_endpoints')
      .where({ id: endpointId })
      .update(update)
      .returning<EndpointRow[]>(endpointColumns);
    return { before: recordOf(current), after: recordOf(row) };
  });
}

/** Soft-deletes a live endpoint; false when the access reaches none. Its deliveries stay for the operators. */
export async function deleteEndpoint(
  database: Knex,
  access: EndpointAccess,
  endpointId: string,
  now: Date,
): Promise<boolean> {
  const changed = await liveEndpoints(database, access)
    .where({ id: endpointId })
    .update({ deleted_at: now, updated_at: now });
  return changed > 0;
}

/**
 * Makes `secret` the current one; the one it replaces is still signed with until `now + overlapSeconds` (with 0,
 * not at all). Its envelope moves over as stored: it is never decrypted here.
 */
export async function rotateEndpointSecret(
  database: Knex,
  cipher: FieldCipher,
  access: EndpointAccess,
  endpointId: string,
  change: { secret: string; overlapSeconds: number; now: Date },
): Promise<WebhookEndpointRecord | undefined> {
  return database.transaction(async (transaction) => {
    const current = await liveEndpoints(transaction, access)
      .where({ id: endpointId })
      .forUpdate()
      .first<Pick<EndpointRow, 'secret'> | undefined>('secret');
    if (current === undefined) return undefined;
    const overlapping = change.overlapSeconds > 0;
    const [row] = await transaction('webhook_endpoints')
      .where({ id: endpointId })
      .update({
        secret: cipher.encrypt(change.secret),
        previous_secret: overlapping ? current.secret : null,
        previous_secret_expires_at: overlapping
          ? new Date(change.now.getTime() + change.overlapSeconds * 1000)
          : null,
        updated_at: change.now,
      })
      .returning<EndpointRow[]>(endpointColumns);
    return recordOf(row);
  });
}

/** What a delivery needs of its endpoint: where, whether it may send, and the secrets to sign with. */
export interface EndpointForDelivery {
  id: string;
  url: string;
  status: EndpointStatus;
  deleted: boolean;
  /** The current secret first, then the previous one while its overlap lasts. */
  secrets: string[];
}

export async function readEndpointForDelivery(
  database: Knex,
  cipher: FieldCipher,
  endpointId: string,
  now: Date,
): Promise<EndpointForDelivery | undefined> {
  const row = await database<EndpointRow>('webhook_endpoints')
    .where({ id: endpointId })
    .first<EndpointRow | undefined>([
      'id',
      'url',
      'status',
      'deleted_at',
      'secret',
      'previous_secret',
      'previous_secret_expires_at',
    ]);
  if (row === undefined) return undefined;
  const previousApplies =
    row.previous_secret !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at.getTime() > now.getTime();
  return {
    id: row.id,
    url: row.url,
    status: row.status,
    deleted: row.deleted_at !== null,
    secrets: [cipher.decrypt(row.secret), ...(previousApplies ? [cipher.decrypt(row.previous_secret!)] : [])],
  };
}

/** Every subject (a booking or a trip) with deliveries to this endpoint still to make. */
export async function subjectsWithPendingDeliveries(database: Knex, endpointId: string): Promise<string[]> {
  const rows = await database('webhook_deliveries')
    .where({ endpoint_id: endpointId, status: 'pending' })
    .distinct<{ subject_id: string }[]>('subject_id');
  return rows.map((row) => row.subject_id);
}

// ---- The delivery log ----

export interface DeliveryAttemptRecord {
  attempt: number;
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookDeliveryRecord {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  subjectType: string;
  subjectId: string;
  sequence: number;
  status: DeliveryStatus;
  attemptCount: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** Oldest first. */
  attempts: DeliveryAttemptRecord[];
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  subject_type: string;
  subject_id: string;
  sequence: number;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
  attempt_list: {
    attempt: number;
    attempted_at: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
  }[];
}

interface ListedDeliveryRow extends DeliveryRow {
  cursor_created_at: string;
}

function deliveryOf(row: DeliveryRow): WebhookDeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    subjectType: row.subject_type,
    subjectId: row.subject_id,
    sequence: row.sequence,
    status: row.status,
    attemptCount: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    nextAttemptAt: iso(row.next_attempt_at),
    deliveredAt: iso(row.delivered_at),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    attempts: row.attempt_list.map((attempt) => ({
      attempt: attempt.attempt,
      attemptedAt: new Date(attempt.attempted_at).toISOString(),
      statusCode: attempt.status_code,
      error: attempt.error,
      durationMs: attempt.duration_ms,
    })),
  };
}

/** The deliveries with their event's facts and every attempt, oldest attempt first. */
function deliveryQuery(database: Knex, endpointId: string): Knex.QueryBuilder {
  return database('webhook_deliveries as delivery')
    .join('partner_events as event', 'event.id', 'delivery.event_id')
    .where('delivery.endpoint_id', endpointId)
    .select(
      'delivery.id',
      'delivery.endpoint_id',
      'delivery.event_id',
      'event.type as event_type',
      'event.subject_type',
      'delivery.subject_id',
      'delivery.sequence',
      'delivery.status',
      'delivery.attempts',
      'delivery.last_status_code',
      'delivery.last_error',
      'delivery.next_attempt_at',
      'delivery.delivered_at',
      'delivery.created_at',
      'delivery.updated_at',
      database.raw(
        `COALESCE((SELECT json_agg(json_build_object('attempt', attempt.attempt, 'attempted_at', attempt.attempted_at,
           'status_code', attempt.status_code, 'error', attempt.error, 'duration_ms', attempt.duration_ms)
           ORDER BY attempt.attempt)
         FROM webhook_attempts AS attempt WHERE attempt.delivery_id = delivery.id), '[]'::json) AS attempt_list`,
      ),
    );
}

export const deliveryListing: KeysetListing<ListedDeliveryRow, CreatedPosition> = {
  name: 'webhook-deliveries',
  positionOf: (row) => ({ createdAt: row.cursor_created_at, id: row.id }),
  readPosition: readCreatedPosition,
};

/** One endpoint's deliveries, newest first, optionally of one status. */
export async function readDeliveryPage(
  database: Knex,
  endpointId: string,
  status: DeliveryStatus | undefined,
  window: PageWindow<ListedDeliveryRow, CreatedPosition>,
): Promise<RowPage<WebhookDeliveryRecord>> {
  const query = deliveryQuery(database, endpointId)
    .select(database.raw(cursorColumn('delivery')))
    .orderBy([
      { column: 'delivery.created_at', order: 'desc' },
      { column: 'delivery.id', order: 'desc' },
    ]);
  if (status !== undefined) query.where('delivery.status', status);
  if (window.after !== undefined) {
    query.whereRaw('(delivery.created_at, delivery.id) < (?::timestamptz, ?::uuid)', [
      window.after.createdAt,
      window.after.id,
    ]);
  }
  const page = await readPage(window, query);
  return { ...page, rows: (page.rows as DeliveryRow[]).map(deliveryOf) };
}

export async function findDelivery(
  database: Knex,
  endpointId: string,
  deliveryId: string,
): Promise<WebhookDeliveryRecord | undefined> {
  const row = await deliveryQuery(database, endpointId)
    .where('delivery.id', deliveryId)
    .first<DeliveryRow | undefined>();
  return row === undefined ? undefined : deliveryOf(row);
}

/** Puts a delivery back in line for its workflow; undefined when there is no such delivery. */
export async function markForRedelivery(
  database: Knex,
  deliveryId: string,
): Promise<{ endpointId: string; subjectId: string } | undefined> {
  const [row] = await database('webhook_deliveries')
    .where({ id: deliveryId })
    .update({ status: 'pending', next_attempt_at: null, updated_at: database.fn.now() })
    .returning<{ endpoint_id: string; subject_id: string }[]>(['endpoint_id', 'subject_id']);
  return row === undefined ? undefined : { endpointId: row.endpoint_id, subjectId: row.subject_id };
}
