// The chaos run's invariant scan over real PostgreSQL and Temporal: silent on healthy bookings, loud on each corruption.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Actor } from '../../../src/domain/actor';
import {
  scanInvariants,
  invariantNames,
  type InvariantName,
  type InvariantReport,
} from '../../cluster/invariants/scan';
import { waitForSettledWorkflows } from '../../cluster/invariants/scope';
import { useSagaTestBed } from '../../support/saga';
import { bookingRequest, createTrip, passengerFor, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';
import { eventually, errorCodeOf } from '../../support/outcomes';
import { bookingWorkflowId, requestCancellationSignal } from '../../../src/workflows/shared';

jest.setTimeout(120_000);

const testBed = useSagaTestBed({ seatCount: 16, premiumRows: 1 });

function subjectsByInvariant(report: InvariantReport): Record<InvariantName, string[]> {
  return Object.fromEntries(
    report.results.map((result) => [
      result.name,
      result.violations.map((violation) => violation.subject).sort(),
    ]),
  ) as Record<InvariantName, string[]>;
}

function noSubjects(): Record<InvariantName, string[]> {
  return Object.fromEntries(invariantNames.map((name) => [name, []])) as unknown as Record<
    InvariantName,
    string[]
  >;
}

async function insertLedgerCharge(idempotencyKey: string, amountMinor: number): Promise<void> {
  await testBed.saga.database('payment_simulator.charges').insert({
    transaction_id: `ch_sim_${randomBytes(12).toString('hex')}`,
    idempotency_key: idempotencyKey,
    amount_minor: amountMinor,
    currency: 'EUR',
    payment_token: 'tok_visa',
    card_brand: 'visa',
    card_last4: '4242',
    description: 'written behind the service',
    status: 'APPROVED',
  });
}

test('The scan finds no violation in bookings that went through every step of their lifecycle', async () => {
  const { saga, trip, customer } = testBed;
  const second: Actor = await createCustomer(saga.database, saga.cipher);
  const app = saga.application;
  const pay = (actor: Actor, id: string) => app.confirmPayment(actor, id, { paymentToken: 'tok_visa' });

  const pending = await app.createBooking(customer, bookingRequest(trip, ['2A']));
  const confirmed = await app.createBooking(customer, bookingRequest(trip, ['2B']));
  await pay(customer, confirmed.id);
  const changedConfirmed = await app.createBooking(customer, bookingRequest(trip, ['2C']));
  await pay(customer, changedConfirmed.id);
  const moved = await app.updateBooking(customer, changedConfirmed.id, {
    seatChanges: [{ passengerId: changedConfirmed.passengers[0].id, seatNumber: '1A', fareClass: 'PREMIUM' }],
  });
  const changedPending = await app.createBooking(second, bookingRequest(trip, ['2D']));
  const grown = await app.updateBooking(second, changedPending.id, {
    addPassengers: [passengerFor('3A', 'STANDARD', { firstName: 'Companion' })],
  });
  const refunded = await app.createBooking(second, bookingRequest(trip, ['3B']));
  await pay(second, refunded.id);
  await app.cancelBooking(second, refunded.id, { reason: 'Plans changed' });
  const dropped = await app.createBooking(second, bookingRequest(trip, ['3C']));
  await app.cancelBooking(second, dropped.id, {});
  const expiring = await saga
    .applicationWith({ BOOKING_HOLD_SECONDS: '2' })
    .createBooking(second, bookingRequest(trip, ['3D']));
  await eventually(
    () => app.getBooking(second, expiring.id),
    (booking) => booking.status === 'EXPIRED',
  );
  // A create that lost its seat leaves a finished workflow and no booking.
  expect(await errorCodeOf(app.createBooking(customer, bookingRequest(trip, ['2A'])))).toBe(
    'SEAT_UNAVAILABLE',
  );

  const settled = await waitForSettledWorkflows(saga.client, { tripIds: [trip.tripId] }, 60_000, 200);
  const report = await scanInvariants({
    database: saga.database,
    temporal: saga.client,
    cipher: saga.cipher,
    scope: { tripIds: [trip.tripId] },
    acknowledged: {
      created: [pending, confirmed, changedConfirmed, changedPending, refunded, dropped, expiring].map(
        (booking) => booking.id,
      ),
      paid: [confirmed.id, changedConfirmed.id, refunded.id],
      changed: [
        { bookingId: moved.id, version: moved.version },
        { bookingId: grown.id, version: grown.version },
      ],
      cancelled: [refunded.id, dropped.id],
    },
  });

  expect(settled).toMatchObject({ settled: true, busyWorkflows: 0 });
  expect(subjectsByInvariant(report)).toEqual(noSubjects());
  expect(report.violationCount).toBe(0);
  expect(report).toMatchObject({
    bookings: 7,
    bookingsByStatus: { PENDING_PAYMENT: 2, CONFIRMED: 2, CANCELLED: 2, EXPIRED: 1 },
    ledgerCharges: 4,
  });
  // Every booking's workflow, and the refused create's if it got as far as starting one.
  expect(report.workflows).toBeGreaterThanOrEqual(7);
});

describe('The scan reports each corruption of the data behind the service', () => {
  let trip: TestTrip;
  let report: InvariantReport;
  const ids: Record<'seatTwice' | 'held' | 'doubleCharged' | 'versionChanged' | 'terminated', string> = {
    seatTwice: '',
    held: '',
    doubleCharged: '',
    versionChanged: '',
    terminated: '',
  };
  const orphanBookingId = randomUUID();
  const neverCreatedId = randomUUID();

  beforeAll(async () => {
    const { saga, customer } = testBed;
    trip = await createTrip(saga.database, { seatCount: 8 });
    const app = saga.application;
    const book = async (seat: string, paid: boolean) => {
      const booking = await app.createBooking(customer, bookingRequest(trip, [seat]));
      if (paid) await app.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
      return booking.id;
    };
    ids.held = await book('1A', true);
    ids.seatTwice = await book('1B', false);
    ids.doubleCharged = await book('1C', true);
    ids.versionChanged = await book('1D', false);
    ids.terminated = await book('2A', false);
    await waitForSettledWorkflows(saga.client, { tripIds: [trip.tripId] }, 60_000, 200);

    // A seat given twice: a second active booking gets a passenger on the first booking's seat.
    const [passenger]: Record<string, unknown>[] = await saga
      .database('passengers')
      .where({ booking_id: ids.seatTwice })
      .select<Record<string, unknown>[]>('*');
    await saga.database('passengers').insert({
      ...passenger,
      id: randomUUID(),
      position: 2,
      seat_number: '1A',
    });
    // A read-model row changed behind the workflow's back.
    await saga.database('bookings').where({ id: ids.versionChanged }).increment('version', 5);
    // The gateway charged a paid booking a second time; and charged a booking that never existed.
    await insertLedgerCharge(`${ids.doubleCharged}:process-payment:9`, 2500);
    await insertLedgerCharge(`${orphanBookingId}:process-payment:1`, 2500);
    // An operator terminated a booking's workflow while it waited for payment.
    await saga.client.workflow.getHandle(`booking-${ids.terminated}`).terminate('invariant scan test');

    report = await scanInvariants({
      database: saga.database,
      temporal: saga.client,
      cipher: saga.cipher,
      scope: { tripIds: [trip.tripId], bookingIds: [orphanBookingId] },
      // Every workflow here has settled: the corrupted row reads the same again at once, no need to wait seconds.
      recheckDelayMs: 100,
      acknowledged: {
        created: [ids.held, neverCreatedId],
        paid: [ids.held, ids.doubleCharged],
        changed: [],
        // The client was told this paid booking was cancelled; it is still CONFIRMED.
        cancelled: [ids.held],
      },
    });
  });

  test('each invariant names exactly the bookings, seats and charges that break it', () => {
    expect(subjectsByInvariant(report)).toEqual({
      ...noSubjects(),
      'booking-settled': [ids.terminated],
      'seat-held-once': [`${trip.tripId}/1A/leg 0`],
      'seats-follow-status': [ids.seatTwice],
      'no-double-charge': [ids.doubleCharged],
      'no-orphan-charge': [`${orphanBookingId}:process-payment:1`],
      'read-model-matches-workflow': [ids.seatTwice, ids.versionChanged].sort(),
      'workflows-not-failed': [ids.terminated],
      'acknowledged-requests-kept': [ids.held, neverCreatedId].sort(),
    });
  });

  test('each violation says what is wrong', () => {
    const details = Object.fromEntries(
      report.results.map((result) => [result.name, result.violations.map((violation) => violation.detail)]),
    );
    expect(details['seat-held-once']).toEqual([`held by ${[ids.held, ids.seatTwice].sort().join(' and ')}`]);
    expect(details['no-double-charge']).toEqual([
      'CONFIRMED: gateway kept 5000 (2 charges, 5000 captured, 0 refunded), booking accounts for 2500',
    ]);
    expect(details['read-model-matches-workflow']).toEqual(
      expect.arrayContaining([expect.stringMatching(/^version: read model 6 ≠ workflow 1$/)]),
    );
    expect(details['workflows-not-failed']).toEqual(['bookingWorkflow TERMINATED']);
    expect(details['booking-settled']).toEqual(['PENDING_PAYMENT but its workflow is TERMINATED']);
    expect(report.violationCount).toBe(10);
  });
});

describe('A booking whose workflow has a task no worker has taken yet is not settled', () => {
  test('the settle waits for the task, and the scan then finds the booking cancelled with its seat free', async () => {
    const { saga, customer } = testBed;
    const trip = await createTrip(saga.database, { seatCount: 4 });
    const scope = { tripIds: [trip.tripId] };
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['1A']));
    await waitForSettledWorkflows(saga.client, scope, 60_000, 200);

    // As after a kill: the workflow has news (a cancel) but no worker to apply it, and no activity pending.
    await saga.stopWorkers();
    try {
      await saga.client.workflow
        .getHandle(bookingWorkflowId(booking.id))
        .signal(requestCancellationSignal, { reason: 'settle test' });
      const waiting = await waitForSettledWorkflows(saga.client, scope, 1_000, 200);
      expect(waiting).toMatchObject({ settled: false, busyWorkflows: 1, runningWorkflows: 1 });
    } finally {
      await saga.startWorkers();
    }

    const settled = await waitForSettledWorkflows(saga.client, scope, 60_000, 200);
    const report = await scanInvariants({
      database: saga.database,
      temporal: saga.client,
      cipher: saga.cipher,
      scope,
    });

    expect(settled).toMatchObject({ settled: true, busyWorkflows: 0 });
    expect(subjectsByInvariant(report)).toEqual(noSubjects());
    expect(report.bookingsByStatus).toEqual({ CANCELLED: 1 });
  });
});
