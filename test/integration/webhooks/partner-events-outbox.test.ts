// The partner events outbox: written in the change's transaction, once per fact, to the endpoints allowed to hear it.
import { expect } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createReadModelActivities } from '../../../src/activities/read-model';
import { createPartnerEventSweep } from '../../../src/application/partner-event-sweep';
import { createWebhookDeliveryStarter } from '../../../src/application/webhook-delivery-starter';
import { recordBookingEvents, type RecordedEvents } from '../../../src/db/partner-events';
import { writeBookingSnapshot } from '../../../src/db/booking-read-model';
import type { BookingState } from '../../../src/domain/booking';
import { partnerEventTypes } from '../../../src/domain/partner-events';
import { bookingState, confirmedState, euros } from '../../support/booking-states';
import { eventually } from '../../support/outcomes';
import { startPartnerReceiver } from '../../support/partner-receiver';
import { useSagaTestBed } from '../../support/saga';
import { createTrip } from '../../support/trips';
import { actorOf, createCustomer, insertUser } from '../../support/users';

jest.setTimeout(120_000);

const testBed = useSagaTestBed(
  { seatCount: 4 },
  { environment: { WEBHOOK_ALLOW_LIST: '127.0.0.1', WEBHOOK_ALLOW_HTTP: 'true' } },
);

const paid = {
  attemptNumber: 1,
  attemptedAt: '2026-11-01T09:05:00.000Z',
  outcome: 'APPROVED' as const,
  amount: euros(5000),
};

async function endpointFor(
  database: Knex,
  partnerId: string,
  options: { allBookings?: boolean; eventTypes?: string[]; url?: string; secret?: string } = {},
): Promise<string> {
  const id = randomUUID();
  await database('webhook_endpoints').insert({
    id,
    partner_id: partnerId,
    url: options.url ?? 'https://partner.example/hooks',
    event_types: options.eventTypes ?? [...partnerEventTypes],
    all_bookings: options.allBookings ?? false,
    secret: testBed.saga.cipher.encrypt(options.secret ?? `whsec_${randomBytes(24).toString('base64')}`),
  });
  return id;
}

/** A booking of the customer's with a row and a trip of the test bed's, as the saga would have written it. */
async function storedBooking(
  customerId: string,
  overrides: Partial<BookingState> = {},
): Promise<BookingState> {
  const { saga, trip } = testBed;
  const booking = bookingState({
    id: randomUUID(),
    customerId,
    tripId: trip.tripId,
    routeId: trip.routeId,
    passengers: [],
    price: { lines: [], total: euros(5000) },
    ...overrides,
  });
  await saga.database.transaction((transaction) => writeBookingSnapshot(transaction, booking, saga.cipher));
  return booking;
}

interface StoredEvent {
  sequence: number;
  type: string;
  fact_key: string;
  dispatched_at: Date | null;
}

function eventsOf(database: Knex, bookingId: string): Promise<StoredEvent[]> {
  return database('partner_events')
    .where({ subject_id: bookingId })
    .orderBy('sequence')
    .select('sequence', 'type', 'fact_key', 'dispatched_at');
}

test('a snapshot and its events commit together: a rolled-back write leaves neither', async () => {
  const { saga } = testBed;
  const customer = await createCustomer(saga.database, saga.cipher);
  const booking = await storedBooking(customer.userId);
  await expect(
    saga.database.transaction(async (transaction) => {
      const confirmed = confirmedState({
        ...booking,
        version: 2,
        paymentAttempts: [paid],
        amountPaid: euros(5000),
        status: 'CONFIRMED',
      });
      await writeBookingSnapshot(transaction, confirmed, saga.cipher);
      await recordBookingEvents(transaction, confirmed);
      throw new Error('the write fails after the events were recorded');
    }),
  ).rejects.toThrow('the write fails');
  expect(await eventsOf(saga.database, booking.id)).toEqual([]);
  const row: { status: string } | undefined = await saga
    .database('bookings')
    .where({ id: booking.id })
    .first('status');
  expect(row?.status).toBe('PENDING_PAYMENT');
});

test('RecordBooking states each fact once, numbered in order; an older snapshot states nothing', async () => {
  const { saga } = testBed;
  const customer = await createCustomer(saga.database, saga.cipher);
  const booking = await storedBooking(customer.userId);
  const record = createReadModelActivities({ database: saga.database, cipher: saga.cipher }).RecordBooking;
  const confirmed = confirmedState({
    ...booking,
    version: 2,
    paymentAttempts: [paid],
    amountPaid: euros(5000),
    status: 'CONFIRMED',
  });
  await record(confirmed);
  await record(confirmed);
  await record({ ...booking, version: 1 });
  const cancelled = confirmedState({
    ...confirmed,
    version: 3,
    status: 'CANCELLED',
    amountRefunded: euros(5000),
    cancelledAt: '2026-11-02T09:00:00.000Z',
    cancellationReason: 'plans changed',
  });
  await record(cancelled);
  await record(cancelled);
  expect(
    (await eventsOf(saga.database, booking.id)).map((event) => [event.sequence, event.fact_key]),
  ).toEqual([
    [1, 'payment.succeeded:1'],
    [2, 'booking.confirmed'],
    [3, 'payment.refunded:5000'],
    [4, 'booking.cancelled'],
  ]);
});

test("a partner's endpoints hear its own bookings, a staff endpoint every booking, nobody else's", async () => {
  const { saga } = testBed;
  const partner = await createCustomer(saga.database, saga.cipher);
  const otherPartner = await createCustomer(saga.database, saga.cipher);
  const operator = await insertUser(saga.database, saga.cipher, { roles: ['agent'] });
  const own = await endpointFor(saga.database, partner.userId);
  const onlyCancellations = await endpointFor(saga.database, partner.userId, {
    eventTypes: ['booking.cancelled'],
  });
  const others = await endpointFor(saga.database, otherPartner.userId);
  const staff = await endpointFor(saga.database, operator.id, { allBookings: true });
  const disabled = await endpointFor(saga.database, partner.userId);
  await saga.database('webhook_endpoints').where({ id: disabled }).update({ status: 'disabled' });

  const booking = await storedBooking(partner.userId);
  const recorded: RecordedEvents = await saga.database.transaction(async (transaction) => {
    const confirmed = confirmedState({
      ...booking,
      version: 2,
      paymentAttempts: [paid],
      amountPaid: euros(5000),
      status: 'CONFIRMED',
    });
    await writeBookingSnapshot(transaction, confirmed, saga.cipher);
    return recordBookingEvents(transaction, confirmed);
  });
  const deliveries: { endpoint_id: string; sequence: number }[] = await saga
    .database('webhook_deliveries')
    .where({ subject_id: booking.id })
    .orderBy(['endpoint_id', 'sequence'])
    .select('endpoint_id', 'sequence');
  const heardBy = (endpointId: string) =>
    deliveries.filter((delivery) => delivery.endpoint_id === endpointId).map((delivery) => delivery.sequence);
  expect({
    own: heardBy(own),
    onlyCancellations: heardBy(onlyCancellations),
    others: heardBy(others),
    staff: heardBy(staff),
    disabled: heardBy(disabled),
  }).toEqual({ own: [1, 2], onlyCancellations: [], others: [], staff: [1, 2], disabled: [] });
  expect(recorded.targets).toHaveLength(2);
  expect(recorded.eventIds).toHaveLength(2);
  // A staff endpoint hears every booking of the shared database: retired before other files' bookings reach it.
  await saga
    .database('webhook_endpoints')
    .whereIn('id', [own, onlyCancellations, others, staff, disabled])
    .update({
      deleted_at: saga.database.fn.now(),
    });
});

test('events left undispatched by a writer that stopped are delivered by the sweep', async () => {
  const { saga } = testBed;
  const partner = await createCustomer(saga.database, saga.cipher);
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const receiver = await startPartnerReceiver({ secret });
  try {
    await endpointFor(saga.database, partner.userId, { url: receiver.url, secret });
    const booking = await storedBooking(partner.userId);
    // A RecordBooking with no starter records the events and wakes nobody, as a process killed after the commit.
    await createReadModelActivities({ database: saga.database, cipher: saga.cipher }).RecordBooking(
      confirmedState({
        ...booking,
        version: 2,
        paymentAttempts: [paid],
        amountPaid: euros(5000),
        status: 'CONFIRMED',
      }),
    );
    expect((await eventsOf(saga.database, booking.id)).map((event) => event.dispatched_at)).toEqual([
      null,
      null,
    ]);
    const sweep = createPartnerEventSweep({
      database: saga.database,
      webhookDeliveries: createWebhookDeliveryStarter(saga.client, {
        taskQueues: saga.taskQueueNames,
        retryScheduleSeconds: [0, 1, 1],
      }),
    });
    // Young events may still be dispatched by their writer: the sweep leaves them alone (it may find other
    // files' older ones in the shared database).
    await sweep.reconcile();
    expect((await eventsOf(saga.database, booking.id)).map((event) => event.dispatched_at)).toEqual([
      null,
      null,
    ]);
    await saga
      .database('partner_events')
      .where({ subject_id: booking.id })
      .update({ recorded_at: saga.database.raw("now() - interval '1 minute'") });
    expect(await sweep.reconcile()).toBeGreaterThanOrEqual(2);
    const dispatched = await eventsOf(saga.database, booking.id);
    expect(dispatched.every((event) => event.dispatched_at !== null)).toBe(true);
    const received = await eventually(
      () => Promise.resolve(receiver.received.map((delivery) => [delivery.type, delivery.data.sequence])),
      (types) => types.length >= 2,
    );
    expect(received).toEqual([
      ['payment.succeeded', 1],
      ['booking.confirmed', 2],
    ]);
  } finally {
    await receiver.down();
  }
});

test("an operator's trip cancellation states trip.cancelled to every subscriber, with the mark", async () => {
  const { saga } = testBed;
  const trip = await createTrip(saga.database, { seatCount: 2 });
  const operator = actorOf(await insertUser(saga.database, saga.cipher, { roles: ['agent'] }));
  const subscriber = await createCustomer(saga.database, saga.cipher);
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const receiver = await startPartnerReceiver({ secret });
  try {
    const endpointId = await endpointFor(saga.database, subscriber.userId, {
      eventTypes: ['trip.cancelled'],
      url: receiver.url,
      secret,
    });
    await saga.application.cancelTrip(operator, trip.tripId, { reason: 'storm warning' });
    const stored = await eventsOf(saga.database, trip.tripId);
    expect(stored.map((event) => [event.sequence, event.type])).toEqual([[1, 'trip.cancelled']]);
    const [delivered] = await eventually(
      () => Promise.resolve(receiver.received),
      (received) => received.length > 0,
    );
    expect(delivered).toMatchObject({
      type: 'trip.cancelled',
      verified: true,
      data: {
        trip_id: trip.tripId,
        route_id: trip.routeId,
        sequence: 1,
        reason: 'storm warning',
        bookings_affected: 0,
      },
    });
    const delivery: { status: string } | undefined = await eventually(
      () => saga.database('webhook_deliveries').where({ endpoint_id: endpointId }).first('status'),
      (row: { status: string } | undefined) => row?.status === 'delivered',
    );
    expect(delivery?.status).toBe('delivered');
  } finally {
    await receiver.down();
  }
});
