// The invariant scan: what PostgreSQL, the payment simulator's ledger and Temporal hold must agree after any chaos.
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import type { Knex } from 'knex';
import { simulatorLedgerTables } from '../../../src/db/payment-simulator-ledger';
import type { BookingStatus, BookingState } from '../../../src/domain/booking';
import { terminalStatuses } from '../../../src/domain/lifecycle';
import {
  bookingViewOfSnapshot,
  bookingViews,
  type BookingRow,
  type BookingView,
} from '../../../src/db/booking-read-model';
import type { FieldCipher } from '../../../src/security/field-encryption';
import type { bookingWorkflow } from '../../../src/workflows/booking';
import { bookingStateQuery, bookingWorkflowId, bookingWorkflowType } from '../../../src/workflows/shared';
import { bookingWorkflowQuery, forEachLimited, workInFlight, type InvariantScope } from './scope';

/** Every invariant the scan checks, in the order the report prints them. */
export const invariantNames = [
  'booking-settled',
  'seat-held-once',
  'seats-follow-status',
  'no-double-charge',
  'ledger-covers-booking',
  'no-orphan-charge',
  'read-model-matches-workflow',
  'workflows-not-failed',
  'acknowledged-requests-kept',
  'handed-out-ids-kept',
] as const;
export type InvariantName = (typeof invariantNames)[number];

export const invariantDescriptions: Record<InvariantName, string> = {
  'booking-settled':
    'every booking terminal, or waiting on a running workflow with no activity or workflow task pending: PENDING_PAYMENT with an unexpired hold, CONFIRMED before departure',
  'seat-held-once': 'no seat of a trip held or booked by two bookings (allocation rows or passengers)',
  'seats-follow-status': "an active booking holds exactly its passengers' seats; a finished one holds none",
  'no-double-charge':
    'the gateway kept no more money for a booking than the booking accounts for (captured minus refunded)',
  'ledger-covers-booking': 'the gateway holds every amount the booking says was paid and not refunded',
  'no-orphan-charge': 'no approved charge left unrefunded without a booking',
  'read-model-matches-workflow':
    "the read model's status, passengers and seats, amounts and version equal the workflow's state",
  'workflows-not-failed': 'no booking workflow failed, was terminated, cancelled or timed out',
  'acknowledged-requests-kept':
    'every request the client saw succeed shows in the final state (a create exists, a payment charged, a change at least its version, a cancel CANCELLED)',
  'handed-out-ids-kept':
    'every booking id a create answered with (201, 202, BOOKING_PROCESSING) has a booking, or a workflow that ended without one',
};

/** One broken rule: what it is about (a booking id, `trip/seat`, a charge key) and what is wrong. */
export interface Violation {
  subject: string;
  detail: string;
}

/** The requests a client saw succeed, each to be found in the final state. */
export interface AcknowledgedRequests {
  created: readonly string[];
  paid: readonly string[];
  changed: readonly { bookingId: string; version: number }[];
  cancelled: readonly string[];
}

export interface InvariantScanInput {
  database: Knex;
  /** A client with the booking data converter: queries answer encrypted payloads. */
  temporal: Client;
  cipher: FieldCipher;
  /** Everything when left out (a stack of its own); tests scope the scan to their trips. */
  scope?: InvariantScope;
  acknowledged?: AcknowledgedRequests;
  /** Booking ids creates answered with, 202 and BOOKING_PROCESSING included: each must have come to something. */
  handedOutIds?: readonly string[];
  /**
   * Customers whose bookings were written straight to PostgreSQL, with no workflow (the bench inventory's
   * pre-booked seats): their seats still count against everyone else's, their rows are not bookings to check.
   */
  ignoredCustomerIds?: readonly string[];
  now?: Date;
  /** How long past its expiry a PENDING_PAYMENT hold may still be waiting for its timer (default 60 s). */
  holdTimerGraceMs?: number;
  /**
   * How long to wait before reading again a booking whose read model and workflow differed, or whose workflow
   * still had work in flight (default 2 s); such bookings are read again until they settle or `recheckForMs`
   * (default 30 s) has passed, and only what is still wrong then counts.
   */
  recheckDelayMs?: number;
  recheckForMs?: number;
  /** Workflows queried and described at once. */
  concurrency?: number;
}

export interface InvariantReport {
  bookings: number;
  bookingsByStatus: Record<string, number>;
  workflows: number;
  ledgerCharges: number;
  results: { name: InvariantName; description: string; violations: Violation[] }[];
  violationCount: number;
}

const activeStatuses: readonly BookingStatus[] = ['PENDING_PAYMENT', 'CONFIRMED'];
const brokenExecutionStatuses = ['FAILED', 'TERMINATED', 'CANCELLED', 'TIMED_OUT'];

interface LedgerCharge {
  idempotency_key: string;
  amount_minor: number;
  refunded_minor: number;
}

/** The booking id a ledger key names (`<booking id>:<step>:<revision>`), or undefined for a foreign key. */
function bookingIdOfKey(key: string): string | undefined {
  const match = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):/i.exec(key);
  return match?.[1]?.toLowerCase();
}

function comparable(view: BookingView) {
  return {
    status: view.status,
    version: view.version,
    passengers: view.passengers.map((passenger) => ({
      id: passenger.id,
      firstName: passenger.firstName,
      lastName: passenger.lastName,
      seatNumber: passenger.seatNumber,
      fareClass: passenger.fareClass,
    })),
    priceTotal: view.price.total.amountMinor,
    amountPaid: view.amountPaid.amountMinor,
    amountRefunded: view.amountRefunded.amountMinor,
    currency: view.price.total.currency,
    paymentStatus: view.payment.status,
    holdExpiresAt: view.holdExpiresAt,
  };
}

/** The fields of two views that differ, as `field: read model … ≠ workflow …`. */
function differences(readModel: BookingView, workflow: BookingView): string[] {
  const left = comparable(readModel);
  const right = comparable(workflow);
  return (Object.keys(left) as (keyof typeof left)[])
    .filter((field) => JSON.stringify(left[field]) !== JSON.stringify(right[field]))
    .map(
      (field) =>
        `${field}: read model ${JSON.stringify(left[field])} ≠ workflow ${JSON.stringify(right[field])}`,
    );
}

class Findings {
  private readonly byName = new Map<InvariantName, Violation[]>(invariantNames.map((name) => [name, []]));

  /** A booking read again adds what it adds the first time once only. */
  add(name: InvariantName, subject: string, detail: string): void {
    const violations = this.byName.get(name);
    if (violations?.some((seen) => seen.subject === subject && seen.detail === detail)) return;
    violations?.push({ subject, detail });
  }

  results(): InvariantReport['results'] {
    return invariantNames.map((name) => ({
      name,
      description: invariantDescriptions[name],
      violations: this.byName.get(name) ?? [],
    }));
  }
}

async function bookingRowsInScope(
  database: Knex,
  scope: InvariantScope | undefined,
  ignoredCustomerIds: readonly string[],
): Promise<BookingRow[]> {
  const query = database<BookingRow>('bookings')
    .select('*')
    .whereNotIn('customer_id', ignoredCustomerIds)
    .orderBy('created_at');
  if (scope !== undefined) {
    query.where((where) => {
      where.whereIn('trip_id', scope.tripIds ?? []).orWhereIn('id', scope.bookingIds ?? []);
    });
  }
  return query;
}

async function checkSeats(
  database: Knex,
  rows: readonly BookingRow[],
  views: ReadonlyMap<string, BookingView>,
  findings: Findings,
): Promise<void> {
  const tripIds = [...new Set(rows.map((row) => row.trip_id))];
  const bookingIds = rows.map((row) => row.id);
  // Claims are per leg of a seat: two bookings may share a seat on adjacent segments, never on one leg.
  const allocations: {
    trip_id: string;
    seat_number: string;
    booking_id: string;
    legs_from: number;
    legs_to: number;
  }[] = await database('seat_allocations')
    .whereIn('trip_id', tripIds)
    .whereIn('state', ['HELD', 'BOOKED'])
    .select(
      'trip_id',
      'seat_number',
      'booking_id',
      database.raw('lower(legs) AS legs_from'),
      database.raw('upper(legs) AS legs_to'),
    );
  const legCounts = new Map<string, number>(
    (
      await database('trips')
        .whereIn('id', tripIds)
        .select<{ id: string; leg_count: number }[]>(
          'id',
          database.raw('route_leg_count(route_id) AS leg_count'),
        )
    ).map((trip) => [trip.id, trip.leg_count]),
  );
  const claims = new Map<string, Set<string>>();
  const claim = (tripId: string, seatNumber: string, bookingId: string, legsFrom: number, legsTo: number) => {
    for (let leg = legsFrom; leg < legsTo; leg += 1) {
      const key = `${tripId}/${seatNumber}/leg ${leg}`;
      claims.set(key, (claims.get(key) ?? new Set()).add(bookingId));
    }
  };
  for (const allocation of allocations)
    claim(
      allocation.trip_id,
      allocation.seat_number,
      allocation.booking_id,
      allocation.legs_from,
      allocation.legs_to,
    );
  const activeRows = rows.filter((row) => activeStatuses.includes(row.status));
  for (const row of activeRows) {
    const view = views.get(row.id);
    const legsFrom = view?.segment?.boardingPosition ?? 0;
    const legsTo = view?.segment?.alightingPosition ?? legCounts.get(row.trip_id) ?? 1;
    for (const passenger of view?.passengers ?? [])
      claim(row.trip_id, passenger.seatNumber, row.id, legsFrom, legsTo);
  }
  for (const [seat, holders] of claims) {
    if (holders.size > 1)
      findings.add('seat-held-once', seat, `held by ${[...holders].sort().join(' and ')}`);
  }
  // Rows of the same booking for one seat would be invisible to the set above: count them apart.
  const perSeat = new Map<string, number>();
  for (const allocation of allocations) {
    const key = `${allocation.trip_id}/${allocation.seat_number}`;
    perSeat.set(key, (perSeat.get(key) ?? 0) + 1);
  }
  for (const [seat, count] of perSeat) {
    if (count > 1 && (claims.get(seat)?.size ?? 0) === 1) {
      findings.add('seat-held-once', seat, `${count} active allocation rows`);
    }
  }

  const allocatedTo = new Map<string, string[]>();
  for (const allocation of allocations.filter((entry) => bookingIds.includes(entry.booking_id))) {
    allocatedTo.set(allocation.booking_id, [
      ...(allocatedTo.get(allocation.booking_id) ?? []),
      allocation.seat_number,
    ]);
  }
  for (const row of rows) {
    const allocated = (allocatedTo.get(row.id) ?? []).sort();
    if (!activeStatuses.includes(row.status)) {
      if (allocated.length > 0) {
        findings.add('seats-follow-status', row.id, `${row.status} but still holds ${allocated.join(', ')}`);
      }
      continue;
    }
    const seats = (views.get(row.id)?.passengers ?? []).map((passenger) => passenger.seatNumber).sort();
    if (JSON.stringify(seats) !== JSON.stringify(allocated)) {
      findings.add(
        'seats-follow-status',
        row.id,
        `${row.status} with passengers on ${seats.join(', ')} but seats held ${allocated.join(', ') || 'none'}`,
      );
    }
  }
}

async function ledgerChargesInScope(
  database: Knex,
  scope: InvariantScope | undefined,
  bookingIds: readonly string[],
): Promise<LedgerCharge[]> {
  const query = database(simulatorLedgerTables.charges)
    .where({ status: 'APPROVED' })
    .select('idempotency_key', 'amount_minor', 'refunded_minor');
  if (scope !== undefined) {
    const ids = [...new Set([...bookingIds, ...(scope.bookingIds ?? [])])];
    if (ids.length === 0) return [];
    // The key starts with the booking id: a range per id keeps the index usable, unlike LIKE over a list.
    query.where((where) => {
      for (const id of ids) where.orWhere('idempotency_key', 'like', `${id.toLowerCase()}:%`);
    });
  }
  return query;
}

function checkMoney(rows: readonly BookingRow[], charges: readonly LedgerCharge[], findings: Findings): void {
  const rowsById = new Map(rows.map((row) => [row.id, row]));
  const ledgerByBooking = new Map<string, { captured: number; refunded: number; charges: number }>();
  for (const charge of charges) {
    const bookingId = bookingIdOfKey(charge.idempotency_key);
    const row = bookingId === undefined ? undefined : rowsById.get(bookingId);
    if (row === undefined) {
      if (charge.refunded_minor < charge.amount_minor) {
        findings.add(
          'no-orphan-charge',
          charge.idempotency_key,
          `${charge.amount_minor - charge.refunded_minor} of ${charge.amount_minor} kept without a booking`,
        );
      }
      continue;
    }
    const ledger = ledgerByBooking.get(row.id) ?? { captured: 0, refunded: 0, charges: 0 };
    ledger.captured += charge.amount_minor;
    ledger.refunded += charge.refunded_minor;
    ledger.charges += 1;
    ledgerByBooking.set(row.id, ledger);
  }
  for (const row of rows) {
    const ledger = ledgerByBooking.get(row.id) ?? { captured: 0, refunded: 0, charges: 0 };
    const ledgerNet = ledger.captured - ledger.refunded;
    // An expired booking owes nothing: whatever its read model says, the gateway must have given it all back.
    const bookingNet = row.status === 'EXPIRED' ? 0 : row.amount_paid_minor - row.amount_refunded_minor;
    const detail = `${row.status}: gateway kept ${ledgerNet} (${ledger.charges} charges, ${ledger.captured} captured, ${ledger.refunded} refunded), booking accounts for ${bookingNet}`;
    if (ledgerNet > bookingNet) findings.add('no-double-charge', row.id, detail);
    if (ledgerNet < bookingNet) findings.add('ledger-covers-booking', row.id, detail);
  }
}

async function readModelViews(
  database: Knex,
  rows: readonly BookingRow[],
  cipher: FieldCipher,
  findings: Findings,
): Promise<Map<string, BookingView>> {
  const views = new Map<string, BookingView>();
  try {
    for (const view of await bookingViews(database, rows, cipher)) views.set(view.id, view);
  } catch {
    // One unreadable row (no passengers, a bad envelope) must not hide the others: read them one by one.
    for (const row of rows) {
      try {
        const [view] = await bookingViews(database, [row], cipher);
        views.set(row.id, view);
      } catch (error) {
        findings.add('read-model-matches-workflow', row.id, `read model unreadable: ${String(error)}`);
      }
    }
  }
  return views;
}

interface WorkflowFacts {
  state?: BookingState;
  execution?: WorkflowExecutionDescription;
  /** What the workflow has yet to finish, e.g. `2 activities pending`; undefined when nothing is in flight. */
  inFlight?: string;
  problem?: string;
}

async function workflowFacts(temporal: Client, bookingId: string): Promise<WorkflowFacts> {
  const handle = temporal.workflow.getHandle(bookingWorkflowId(bookingId));
  try {
    const description = await handle.describe();
    const inFlight = workInFlight(description);
    const state = await handle.query(bookingStateQuery);
    return {
      execution: description,
      ...(inFlight === undefined ? {} : { inFlight }),
      ...(state === undefined ? {} : { state }),
    };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

function checkWorkflows(
  rows: readonly BookingRow[],
  views: ReadonlyMap<string, BookingView>,
  facts: ReadonlyMap<string, WorkflowFacts>,
  now: Date,
  holdTimerGraceMs: number,
  findings: Findings,
): void {
  for (const row of rows) {
    const fact = facts.get(row.id);
    const view = views.get(row.id);
    if (fact?.state === undefined) {
      const why = fact?.problem ?? 'the workflow answered no state';
      findings.add('read-model-matches-workflow', row.id, `no workflow state: ${why}`);
    } else if (view !== undefined) {
      const differing = differences(view, bookingViewOfSnapshot(fact.state));
      if (differing.length > 0) findings.add('read-model-matches-workflow', row.id, differing.join('; '));
    }

    if (terminalStatuses.includes(row.status)) continue;
    const running = fact?.execution?.status.name === 'RUNNING';
    if (!running) {
      findings.add(
        'booking-settled',
        row.id,
        `${row.status} but its workflow is ${fact?.execution?.status.name ?? 'missing'}`,
      );
    } else if (fact.inFlight !== undefined) {
      findings.add('booking-settled', row.id, `${row.status} with ${fact.inFlight}`);
    }
    if (row.status === 'PENDING_PAYMENT') {
      const expiresAt = row.hold_expires_at?.getTime() ?? 0;
      if (expiresAt + holdTimerGraceMs < now.getTime()) {
        findings.add(
          'booking-settled',
          row.id,
          `PENDING_PAYMENT with a hold that expired at ${row.hold_expires_at?.toISOString()}`,
        );
      }
    } else if (
      row.status === 'CONFIRMED' &&
      row.departure_time.getTime() + holdTimerGraceMs < now.getTime()
    ) {
      findings.add(
        'booking-settled',
        row.id,
        `CONFIRMED after its departure at ${row.departure_time.toISOString()}`,
      );
    }
  }
}

async function checkFailedWorkflows(
  temporal: Client,
  scope: InvariantScope | undefined,
  findings: Findings,
): Promise<number> {
  let workflows = 0;
  for await (const execution of temporal.workflow.list({ query: bookingWorkflowQuery(scope) })) {
    workflows += 1;
    if (brokenExecutionStatuses.includes(execution.status.name)) {
      findings.add(
        'workflows-not-failed',
        execution.workflowId.replace(/^booking-/, ''),
        `${bookingWorkflowType} ${execution.status.name}`,
      );
    }
  }
  return workflows;
}

function checkAcknowledged(
  acknowledged: AcknowledgedRequests,
  rows: readonly BookingRow[],
  charges: readonly LedgerCharge[],
  findings: Findings,
): void {
  const rowsById = new Map(rows.map((row) => [row.id, row]));
  const charged = new Set(charges.map((charge) => bookingIdOfKey(charge.idempotency_key)));
  for (const bookingId of acknowledged.created) {
    if (!rowsById.has(bookingId))
      findings.add('acknowledged-requests-kept', bookingId, 'create answered OK but no booking exists');
  }
  for (const bookingId of acknowledged.paid) {
    if (!charged.has(bookingId))
      findings.add(
        'acknowledged-requests-kept',
        bookingId,
        'payment answered OK but the gateway holds no charge',
      );
  }
  for (const { bookingId, version } of acknowledged.changed) {
    const row = rowsById.get(bookingId);
    if (row === undefined || row.version < version) {
      findings.add(
        'acknowledged-requests-kept',
        bookingId,
        `change answered version ${version} but the booking is at ${row?.version ?? 'nothing'}`,
      );
    }
  }
  for (const bookingId of acknowledged.cancelled) {
    const status = rowsById.get(bookingId)?.status;
    if (status !== 'CANCELLED') {
      findings.add(
        'acknowledged-requests-kept',
        bookingId,
        `cancel answered OK but the booking is ${status ?? 'missing'}`,
      );
    }
  }
}

/** An id without a booking row must name a workflow that ended without a booking; anything else broke a promise. */
async function checkHandedOutIds(
  temporal: Client,
  bookingIds: readonly string[],
  rows: readonly BookingRow[],
  concurrency: number,
  findings: Findings,
): Promise<void> {
  const booked = new Set(rows.map((row) => row.id));
  const withoutRow = [...new Set(bookingIds)].filter((bookingId) => !booked.has(bookingId));
  await forEachLimited(withoutRow, concurrency, async (bookingId) => {
    const handle = temporal.workflow.getHandle<typeof bookingWorkflow>(bookingWorkflowId(bookingId));
    let running: boolean;
    try {
      running = (await handle.describe()).status.name === 'RUNNING';
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      findings.add(
        'handed-out-ids-kept',
        bookingId,
        'a create answered with this id, but no workflow exists',
      );
      return;
    }
    if (running) {
      findings.add('handed-out-ids-kept', bookingId, 'its workflow still runs without having held the seats');
      return;
    }
    const outcome = await handle.result().catch(() => undefined);
    if (outcome?.outcome !== 'NOT_BOOKED') {
      findings.add('handed-out-ids-kept', bookingId, 'its workflow ended without a booking row or a reason');
    }
  });
}

/**
 * Reads every booking in scope from PostgreSQL, its workflow from Temporal and its money from the simulator's
 * ledger, and answers each invariant with the subjects that break it (an empty list when it holds).
 */
export async function scanInvariants(input: InvariantScanInput): Promise<InvariantReport> {
  const { database, temporal, cipher, scope } = input;
  const now = input.now ?? new Date();
  const holdTimerGraceMs = input.holdTimerGraceMs ?? 60_000;
  const findings = new Findings();

  const firstRows = await bookingRowsInScope(database, scope, input.ignoredCustomerIds ?? []);
  const views = await readModelViews(database, firstRows, cipher, findings);
  const facts = new Map<string, WorkflowFacts>();
  const readFacts = (of: readonly BookingRow[]) =>
    forEachLimited(of, input.concurrency ?? 8, async (row) => {
      facts.set(row.id, await workflowFacts(temporal, row.id));
    });
  await readFacts(firstRows);
  // The row and the workflow are read moments apart: a booking whose read model and workflow differ is read again
  // once. A workflow may also be between an activity's result and the task applying it (seats released, booking
  // not yet CANCELLED): such bookings are read again until their work is done or the recheck time is up. Only
  // what is still wrong then counts.
  const readAgain = new Set<string>();
  const unsettled = (of: readonly BookingRow[]) =>
    of.filter((row) => {
      const fact = facts.get(row.id);
      const view = views.get(row.id);
      if (fact?.inFlight !== undefined && !terminalStatuses.includes(row.status)) return true;
      return (
        !readAgain.has(row.id) &&
        fact?.state !== undefined &&
        view !== undefined &&
        differences(view, bookingViewOfSnapshot(fact.state)).length > 0
      );
    });
  const latestRows = new Map(firstRows.map((row) => [row.id, row]));
  const recheckUntil = Date.now() + (input.recheckForMs ?? 30_000);
  for (let again = unsettled(firstRows); again.length > 0 && Date.now() < recheckUntil;) {
    await new Promise((resolve) => setTimeout(resolve, input.recheckDelayMs ?? 2000));
    const reread = await bookingRowsInScope(database, { bookingIds: again.map((row) => row.id) }, []);
    for (const [id, view] of await readModelViews(database, reread, cipher, findings)) views.set(id, view);
    await readFacts(reread);
    for (const row of reread) {
      latestRows.set(row.id, row);
      readAgain.add(row.id);
    }
    again = unsettled(reread);
  }
  const rows = firstRows.map((row) => latestRows.get(row.id) ?? row);

  await checkSeats(database, rows, views, findings);
  const charges = await ledgerChargesInScope(database, scope, [
    ...rows.map((row) => row.id),
    ...(input.acknowledged?.created ?? []),
  ]);
  checkMoney(rows, charges, findings);
  checkWorkflows(rows, views, facts, now, holdTimerGraceMs, findings);
  const workflows = await checkFailedWorkflows(temporal, scope, findings);
  if (input.acknowledged !== undefined) checkAcknowledged(input.acknowledged, rows, charges, findings);
  if (input.handedOutIds !== undefined) {
    await checkHandedOutIds(temporal, input.handedOutIds, rows, input.concurrency ?? 8, findings);
  }

  const bookingsByStatus: Record<string, number> = {};
  for (const row of rows) bookingsByStatus[row.status] = (bookingsByStatus[row.status] ?? 0) + 1;
  const results = findings.results();
  return {
    bookings: rows.length,
    bookingsByStatus,
    workflows,
    ledgerCharges: charges.length,
    results,
    violationCount: results.reduce((total, result) => total + result.violations.length, 0),
  };
}

/** The report as lines: one per invariant with its count, and the first few subjects of each broken one. */
export function formatInvariantReport(report: InvariantReport, examplesPerInvariant = 5): string[] {
  const lines = [
    `bookings scanned ${report.bookings} (${Object.entries(report.bookingsByStatus)
      .map(([status, count]) => `${status} ${count}`)
      .join(', ')}), booking workflows ${report.workflows}, approved ledger charges ${report.ledgerCharges}`,
  ];
  for (const result of report.results) {
    lines.push(
      `${result.violations.length === 0 ? 'ok  ' : 'FAIL'} ${result.name}: ${result.violations.length} (${result.description})`,
    );
    for (const violation of result.violations.slice(0, examplesPerInvariant)) {
      lines.push(`       ${violation.subject}: ${violation.detail}`);
    }
    if (result.violations.length > examplesPerInvariant) {
      lines.push(`       … and ${result.violations.length - examplesPerInvariant} more`);
    }
  }
  lines.push(`violations: ${report.violationCount}`);
  return lines;
}
