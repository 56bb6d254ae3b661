// The partner events outbox: events written with the change they state, their deliveries, and each attempt's outcome.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { BookingState } from '../domain/booking';
import {
  bookingEventBase,
  bookingEventDrafts,
  eventData,
  itineraryOf,
  type PartnerEventDraft,
} from '../domain/partner-events';
import type { WebhookDeliveryStarter } from '../ports/webhooks';
import type { FieldCipher } from '../security/field-encryption';

/** One delivery workflow to wake: an endpoint and the subject whose events wait for it. */
export interface DeliveryTarget {
  endpointId: string;
  subjectId: string;
}

/** What a write recorded: the new events, and the delivery workflows that must hear of them after the commit. */
export interface RecordedEvents {
  eventIds: string[];
  targets: DeliveryTarget[];
}

const nothingRecorded: RecordedEvents = { eventIds: [], targets: [] };

interface Subject {
  type: 'booking' | 'trip';
  id: string;
  /** The account whose endpoints hear of it besides staff ones; none for a trip, which every subscriber hears of. */
  ownerId?: string;
  /** The subject's part of every event's data. */
  base: Record<string, unknown>;
}

interface StoredFact {
  fact_key: string;
  sequence: number;
  itinerary: string | null;
}

const itineraryTypes = new Set(['booking.confirmed', 'booking.changed']);

/**
 * Records the facts `drafts` states that the subject has no event for yet, numbered after its last, with a delivery
 * to every enabled endpoint subscribed to each. Run inside the transaction of the change itself, under the subject's
 * row lock, so sequences are given out one writer at a time.
 */
async function recordSubjectEvents(
  transaction: Knex.Transaction,
  subject: Subject,
  drafts: (lastItinerary: string | undefined) => PartnerEventDraft[],
  itinerary?: string,
): Promise<RecordedEvents> {
  const stored: StoredFact[] = await transaction('partner_events')
    .where({ subject_id: subject.id })
    .orderBy('sequence')
    .select('fact_key', 'sequence', 'itinerary');
  const known = new Set(stored.map((fact) => fact.fact_key));
  const lastItinerary = [...stored].reverse().find((fact) => fact.itinerary !== null)?.itinerary ?? undefined;
  const fresh = drafts(lastItinerary).filter((draft) => !known.has(draft.key));
  if (fresh.length === 0) return nothingRecorded;
  const subscribed = transaction('webhook_endpoints').whereNull('deleted_at').where({ status: 'enabled' });
  const { ownerId } = subject;
  const endpoints: { id: string; event_types: string[] }[] = await (
    ownerId === undefined
      ? subscribed
      : subscribed.where((reach) => {
          void reach.where({ all_bookings: true }).orWhere({ partner_id: ownerId });
        })
  ).select('id', 'event_types');
  let sequence = stored.at(-1)?.sequence ?? 0;
  const events = fresh.map((draft) => {
    sequence += 1;
    const subscribers = endpoints.filter((endpoint) => endpoint.event_types.includes(draft.type));
    return {
      row: {
        id: randomUUID(),
        subject_type: subject.type,
        subject_id: subject.id,
        sequence,
        fact_key: draft.key,
        type: draft.type,
        owner_id: subject.ownerId ?? null,
        data: JSON.stringify(eventData(subject.base, sequence, draft)),
        itinerary: itineraryTypes.has(draft.type) ? (itinerary ?? null) : null,
        occurred_at: draft.occurredAt,
        // An event nobody subscribes to has nothing to dispatch.
        dispatched_at: subscribers.length === 0 ? transaction.fn.now() : null,
      },
      subscribers,
    };
  });
  await transaction('partner_events').insert(events.map((event) => event.row));
  const deliveries = events.flatMap(({ row, subscribers }) =>
    subscribers.map((endpoint) => ({
      id: randomUUID(),
      endpoint_id: endpoint.id,
      event_id: row.id,
      subject_id: subject.id,
      sequence: row.sequence,
    })),
  );
  if (deliveries.length > 0) await transaction('webhook_deliveries').insert(deliveries);
  const targets = [...new Set(deliveries.map((delivery) => delivery.endpoint_id))].map((endpointId) => ({
    endpointId,
    subjectId: subject.id,
  }));
  return {
    eventIds: events.filter((event) => event.subscribers.length > 0).map((event) => event.row.id),
    targets,
  };
}

/** The partner events a booking snapshot states and its subject has not had yet; in the snapshot's transaction. */
export function recordBookingEvents(
  transaction: Knex.Transaction,
  booking: BookingState,
): Promise<RecordedEvents> {
  return recordSubjectEvents(
    transaction,
    { type: 'booking', id: booking.id, ownerId: booking.customerId, base: bookingEventBase(booking) },
    (lastItinerary) => bookingEventDrafts(booking, lastItinerary),
    itineraryOf(booking),
  );
}

/** A trip's events (its cancellation), heard by every endpoint subscribed; in the transaction of the mark. */
export function recordTripEvents(
  transaction: Knex.Transaction,
  trip: { id: string; routeId: string; departureTime: string },
  drafts: PartnerEventDraft[],
): Promise<RecordedEvents> {
  return recordSubjectEvents(
    transaction,
    {
      type: 'trip',
      id: trip.id,
      base: { trip_id: trip.id, route_id: trip.routeId, departure_time: trip.departureTime },
    },
    () => drafts,
  );
}

/** Once the targets' workflows have been told: the events need no sweep. */
export async function markEventsDispatched(database: Knex, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await database('partner_events')
    .whereIn('id', eventIds)
    .whereNull('dispatched_at')
    .update({ dispatched_at: database.fn.now() });
}

/**
 * Tells the delivery workflows of events a write just committed, then marks them dispatched. A failed nudge leaves
 * the events for the sweep (they are recorded, so none is lost) and never fails the write that recorded them.
 */
export async function dispatchRecordedEvents(
  database: Knex,
  starter: WebhookDeliveryStarter | undefined,
  recorded: RecordedEvents,
  onLeftForSweep: (error: unknown) => void,
): Promise<void> {
  if (starter === undefined || recorded.targets.length === 0) return;
  try {
    await Promise.all(recorded.targets.map((target) => starter.nudge(target)));
    await markEventsDispatched(database, recorded.eventIds);
  } catch (error) {
    onLeftForSweep(error);
  }
}

/**
 * Events recorded at least `olderThanSeconds` ago whose workflows may never have been told (the process stopped
 * between the commit and the signal), with their targets.
 */
export async function undispatchedEvents(
  database: Knex,
  olderThanSeconds: number,
  limit: number,
): Promise<RecordedEvents> {
  // Whole events, so one marked dispatched has had every one of its targets told.
  const oldest = database('partner_events')
    .whereNull('dispatched_at')
    .where('recorded_at', '<', database.raw('now() - make_interval(secs => ?)', [olderThanSeconds]))
    .orderBy('recorded_at')
    .limit(limit)
    .select('id');
  return targetsOf(database, oldest);
}

/**
 * The subject's events whose delivery workflows may not have been told: a write retried after its process died
 * between the commit and the signal finds its events recorded already, and wakes their workflows itself.
 */
export async function undispatchedEventsOf(database: Knex, subjectId: string): Promise<RecordedEvents> {
  const events: { id: string }[] = await database('partner_events')
    .where({ subject_id: subjectId })
    .whereNull('dispatched_at')
    .select('id');
  return events.length === 0
    ? nothingRecorded
    : targetsOf(
        database,
        events.map((event) => event.id),
      );
}

async function targetsOf(database: Knex, events: Knex.QueryBuilder | string[]): Promise<RecordedEvents> {
  const rows: { event_id: string; endpoint_id: string; subject_id: string }[] = await database(
    'webhook_deliveries',
  )
    .whereIn('event_id', events)
    .select('event_id', 'endpoint_id', 'subject_id');
  const targets = new Map(
    rows.map((row) => [
      `${row.endpoint_id}/${row.subject_id}`,
      { endpointId: row.endpoint_id, subjectId: row.subject_id },
    ]),
  );
  return { eventIds: [...new Set(rows.map((row) => row.event_id))], targets: [...targets.values()] };
}

// ---- Delivery: what the delivery workflow's activities read and write ----

/** Why an endpoint stopped hearing events; the delivery workflow ends once it sees one. */
export type EndpointStop = 'disabled' | 'deleted' | 'missing';

export type NextDelivery =
  { kind: 'delivery'; deliveryId: string } | { kind: 'none' } | { kind: 'stopped'; because: EndpointStop };

async function endpointStop(database: Knex, endpointId: string): Promise<EndpointStop | undefined> {
  const endpoint: { status: string; deleted_at: Date | null } | undefined = await database(
    'webhook_endpoints',
  )
    .where({ id: endpointId })
    .first('status', 'deleted_at');
  if (endpoint === undefined) return 'missing';
  if (endpoint.deleted_at !== null) return 'deleted';
  return endpoint.status === 'enabled' ? undefined : 'disabled';
}

/** The subject's first delivery still pending to the endpoint, in sequence order: each waits for those before it. */
export async function nextPendingDelivery(database: Knex, target: DeliveryTarget): Promise<NextDelivery> {
  const stop = await endpointStop(database, target.endpointId);
  if (stop !== undefined) return { kind: 'stopped', because: stop };
  const row: { id: string } | undefined = await database('webhook_deliveries')
    .where({ endpoint_id: target.endpointId, subject_id: target.subjectId, status: 'pending' })
    .orderBy('sequence')
    .first('id');
  return row === undefined ? { kind: 'none' } : { kind: 'delivery', deliveryId: row.id };
}

/** Everything one attempt needs: where, what, and the secrets to sign with (decrypted, never logged). */
export interface DeliveryToSend {
  deliveryId: string;
  endpointId: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  url: string;
  endpointStop?: EndpointStop;
  secrets: string[];
  messageId: string;
  eventType: string;
  data: Record<string, unknown>;
  occurredAt: Date;
  recordedAt: Date;
}

export async function deliveryToSend(
  database: Knex,
  cipher: FieldCipher,
  deliveryId: string,
): Promise<DeliveryToSend | undefined> {
  const row:
    | {
        delivery_id: string;
        endpoint_id: string;
        status: DeliveryToSend['status'];
        attempts: number;
        url: string;
        endpoint_status: string;
        deleted_at: Date | null;
        secret: string;
        previous_secret: string | null;
        previous_secret_expires_at: Date | null;
        event_id: string;
        type: string;
        data: Record<string, unknown>;
        occurred_at: Date;
        recorded_at: Date;
      }
    | undefined = await database('webhook_deliveries as delivery')
    .join('webhook_endpoints as endpoint', 'endpoint.id', 'delivery.endpoint_id')
    .join('partner_events as event', 'event.id', 'delivery.event_id')
    .where('delivery.id', deliveryId)
    .first(
      'delivery.id as delivery_id',
      'delivery.endpoint_id',
      'delivery.status',
      'delivery.attempts',
      'endpoint.url',
      'endpoint.status as endpoint_status',
      'endpoint.deleted_at',
      'endpoint.secret',
      'endpoint.previous_secret',
      'endpoint.previous_secret_expires_at',
      'event.id as event_id',
      'event.type',
      'event.data',
      'event.occurred_at',
      'event.recorded_at',
    );
  if (row === undefined) return undefined;
  const overlapping =
    row.previous_secret !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at.getTime() > Date.now();
  const stop: EndpointStop | undefined =
    row.deleted_at !== null ? 'deleted' : row.endpoint_status === 'enabled' ? undefined : 'disabled';
  return {
    deliveryId: row.delivery_id,
    endpointId: row.endpoint_id,
    status: row.status,
    attempts: row.attempts,
    url: row.url,
    ...(stop === undefined ? {} : { endpointStop: stop }),
    secrets: [
      cipher.decrypt(row.secret),
      ...(overlapping && row.previous_secret !== null ? [cipher.decrypt(row.previous_secret)] : []),
    ],
    messageId: `msg_${row.event_id}`,
    eventType: row.type,
    data: row.data,
    occurredAt: row.occurred_at,
    recordedAt: row.recorded_at,
  };
}

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  attemptedAt: Date;
  statusCode?: number;
  error?: string;
  durationMs: number;
  /** What the delivery is after this attempt; `nextAttemptAt` with `pending`. */
  status: 'pending' | 'delivered' | 'failed';
  nextAttemptAt?: Date;
}

/**
 * Writes one attempt and where the delivery stands after it, once: an attempt retried after the process died writes
 * nothing the second time (its number is taken).
 */
export async function recordAttempt(database: Knex, record: AttemptRecord): Promise<void> {
  await database.transaction(async (transaction) => {
    const inserted = await transaction('webhook_attempts')
      .insert({
        delivery_id: record.deliveryId,
        attempt: record.attempt,
        attempted_at: record.attemptedAt,
        status_code: record.statusCode ?? null,
        error: record.error ?? null,
        duration_ms: Math.round(record.durationMs),
      })
      .onConflict(['delivery_id', 'attempt'])
      .ignore()
      .returning('attempt');
    if (inserted.length === 0) return;
    await transaction('webhook_deliveries')
      .where({ id: record.deliveryId })
      .update({
        attempts: record.attempt,
        status: record.status,
        last_status_code: record.statusCode ?? null,
        last_error: record.error ?? null,
        next_attempt_at: record.nextAttemptAt ?? null,
        delivered_at: record.status === 'delivered' ? record.attemptedAt : null,
        updated_at: transaction.fn.now(),
      });
  });
}

/** Disables the endpoint (410, or the schedule exhausted); its other pending deliveries wait for it to be enabled. */
export async function disableEndpoint(database: Knex, endpointId: string, reason: string): Promise<boolean> {
  const updated = await database('webhook_endpoints').where({ id: endpointId, status: 'enabled' }).update({
    status: 'disabled',
    disabled_reason: reason,
    disabled_at: database.fn.now(),
    updated_at: database.fn.now(),
  });
  return updated > 0;
}
