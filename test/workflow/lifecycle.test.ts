// One test per row of the lifecycle table (docs/design.md): the workflow's transitions and the activities each calls.
import { expect } from '@jest/globals';
import {
  cancelBookingUpdate,
  confirmPaymentUpdate,
  createBookingUpdate,
  searchAttributes,
  updateBookingUpdate,
} from '../../src/workflows/shared';
import {
  activitiesOf,
  BookingWorkflowTier,
  declinedCard,
  quietRuntime,
  stateOf,
  updateErrorCode,
} from './support/booking-workflow';

const tier = new BookingWorkflowTier();

beforeAll(async () => {
  quietRuntime();
  await tier.start();
});

afterAll(() => tier.stop());

test('create, seats free → PENDING_PAYMENT: the first ReserveSeats carries the booking row with the holds', async () => {
  const booking = await tier.createBooking({ seats: ['2A', '2B'] });

  expect(booking.created).toMatchObject({ status: 'PENDING_PAYMENT', version: 1 });
  expect(booking.created.passengers.map((passenger) => passenger.id)).toEqual(booking.input.passengerIds);
  expect(activitiesOf(booking)).toEqual(['ReserveSeats']);
  expect(booking.calls[0].input).toMatchObject({
    booking: { id: booking.bookingId, status: 'PENDING_PAYMENT' },
  });
});

test('create, a seat taken → no booking: SEAT_UNAVAILABLE, the seats released, the workflow ends NOT_BOOKED', async () => {
  const booking = await tier.startBooking({ outcomes: { seatTaken: true } });

  expect(
    await updateErrorCode(
      booking.handle.executeUpdate(createBookingUpdate, { args: [{ requestFingerprint: 'workflow-tier' }] }),
    ),
  ).toBe('SEAT_UNAVAILABLE');
  expect(await booking.handle.result()).toMatchObject({
    outcome: 'NOT_BOOKED',
    error: { code: 'SEAT_UNAVAILABLE' },
  });
  expect(activitiesOf(booking)).toEqual(['ReserveSeats', 'ReleaseSeats']);
});

test('PENDING_PAYMENT, payment approved → CONFIRMED: charged, seats booked, email and SMS', async () => {
  const booking = await tier.createBooking({ contactPhone: '+351912345678' });

  const confirmed = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });

  expect(confirmed).toMatchObject({ status: 'CONFIRMED', amountPaid: confirmed.price.total });
  const activities = activitiesOf(booking);
  expect(activities.slice(0, 4)).toEqual(['ReserveSeats', 'ProcessPayment', 'ConfirmSeats', 'IssueTickets']);
  // The email and the SMS are sent together: which the worker runs first is not the workflow's to say.
  expect(activities.slice(4).sort()).toEqual(['SendEmailNotification', 'SendSMSNotification']);
});

test('PENDING_PAYMENT, payment declined → PENDING_PAYMENT: the attempt recorded, PAYMENT_DECLINED, a retry may pay', async () => {
  const booking = await tier.createBooking();

  const declined = booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: declinedCard }],
  });
  expect(await updateErrorCode(declined)).toBe('PAYMENT_DECLINED');
  expect(await stateOf(booking)).toMatchObject({
    status: 'PENDING_PAYMENT',
    paymentAttempts: [{ attemptNumber: 1, outcome: 'DECLINED' }],
  });
  const paid = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });

  expect(paid.status).toBe('CONFIRMED');
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'ProcessPayment',
    'ConfirmSeats',
    'IssueTickets',
    'SendEmailNotification',
  ]);
});

test('PENDING_PAYMENT, the hold timer fires → EXPIRED: seats released, a notification', async () => {
  const booking = await tier.createBooking({ timings: { holdDurationMs: 1_000 } });

  const { booking: ended } = (await booking.handle.result()) as { booking: { status: string } };

  expect(ended.status).toBe('EXPIRED');
  expect(activitiesOf(booking)).toEqual(['ReserveSeats', 'ReleaseSeats', 'SendEmailNotification']);
});

test('PENDING_PAYMENT, cancel → CANCELLED: seats released, nothing to refund', async () => {
  const booking = await tier.createBooking();

  const cancelled = await booking.handle.executeUpdate(cancelBookingUpdate, {
    args: [{ reason: 'Plans changed' }],
  });

  expect(cancelled).toMatchObject({ status: 'CANCELLED', cancellationReason: 'Plans changed' });
  expect(activitiesOf(booking)).toEqual(['ReserveSeats', 'ReleaseSeats']);
  expect(await booking.handle.result()).toMatchObject({ outcome: 'BOOKING_ENDED' });
});

test('(being made), cancel → CANCELLED once the seats are held: the RequestCancellation signal, ReleaseSeats right after ReserveSeats', async () => {
  const booking = await tier.startBooking({ cancelWithStart: { reason: 'Changed my mind' } });

  const result = await booking.handle.result();

  expect(result).toMatchObject({
    outcome: 'BOOKING_ENDED',
    booking: { status: 'CANCELLED', cancellationReason: 'Changed my mind' },
  });
  expect(activitiesOf(booking)).toEqual(['ReserveSeats', 'ReleaseSeats']);
});

test('CONFIRMED, cancel → CANCELLED: the refund the fare rule gives, seats released, a notification', async () => {
  const booking = await tier.createBooking();
  const paid = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });

  const cancelled = await booking.handle.executeUpdate(cancelBookingUpdate, { args: [{}] });

  expect(cancelled).toMatchObject({ status: 'CANCELLED', amountRefunded: paid.amountPaid });
  expect(activitiesOf(booking).slice(-4)).toEqual([
    'RefundPayment',
    'ReleaseSeats',
    'IssueTickets',
    'SendEmailNotification',
  ]);
});

test('PENDING_PAYMENT and CONFIRMED, change → status unchanged: new seats held first, then the old released, the difference charged', async () => {
  const booking = await tier.createBooking({ seats: ['2A'] });
  const [passenger] = booking.created.passengers;

  const pendingChange = await booking.handle.executeUpdate(updateBookingUpdate, {
    args: [{ changes: { seatChanges: [{ passengerId: passenger.id, seatNumber: '2B' }] } }],
  });
  expect(pendingChange).toMatchObject({ status: 'PENDING_PAYMENT', passengers: [{ seatNumber: '2B' }] });
  await booking.handle.executeUpdate(confirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] });
  const upgrade = await booking.handle.executeUpdate(updateBookingUpdate, {
    args: [
      { changes: { seatChanges: [{ passengerId: passenger.id, seatNumber: '1A', fareClass: 'PREMIUM' }] } },
    ],
  });

  expect(upgrade).toMatchObject({
    status: 'CONFIRMED',
    passengers: [{ seatNumber: '1A', fareClass: 'PREMIUM' }],
  });
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ReserveSeats',
    'ReleaseSeats',
    'SendEmailNotification',
    'ProcessPayment',
    'ConfirmSeats',
    'IssueTickets',
    'SendEmailNotification',
    'ReserveSeats',
    'ConfirmSeats',
    'ProcessPayment',
    'ReleaseSeats',
    'IssueTickets',
    'SendEmailNotification',
  ]);
  const releases = booking.calls.filter((call) => call.activity === 'ReleaseSeats');
  expect(releases.map((call) => call.input.seatNumbers)).toEqual([['2A'], ['2B']]);
});

test('CONFIRMED, departure passes → COMPLETED: the workflow ends', async () => {
  const booking = await tier.createBooking({ departureInMs: 6_000 });
  await booking.handle.executeUpdate(confirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] });

  const result = await booking.handle.result();

  expect(result).toMatchObject({ outcome: 'BOOKING_ENDED', booking: { status: 'COMPLETED' } });
});

test('CONFIRMED, segment change → status unchanged: the new legs held and booked first, the difference charged, then the old legs cut away', async () => {
  const stop = (code: string, localTime: string) => ({
    code,
    name: `${code} station`,
    city: code,
    timeZone: 'Europe/Berlin',
    localTime,
  });
  const segmentOf = (alighting: 'HAJ' | 'BER', alightingPosition: number, arrival: string) => ({
    boardingStopCode: 'AMS',
    alightingStopCode: alighting,
    boardingPosition: 0,
    alightingPosition,
    boardingStop: stop('AMS', '2030-06-01T09:00:00+02:00'),
    alightingStop: stop(alighting, arrival),
  });
  const booking = await tier.createBooking({
    seats: ['3A'],
    segment: segmentOf('HAJ', 1, '2030-06-01T14:00:00+02:00'),
  });
  await booking.handle.executeUpdate(confirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] });
  const price = booking.created.price.total;
  const longer = await booking.handle.executeUpdate(updateBookingUpdate, {
    args: [
      {
        changes: { alightingStop: 'BER' },
        segmentChange: {
          segment: segmentOf('BER', 2, '2030-06-01T17:00:00+02:00'),
          farePrices: {
            STANDARD: { amountMinor: price.amountMinor * 2, currency: price.currency },
            PREMIUM: { amountMinor: price.amountMinor * 3, currency: price.currency },
          },
          departureTime: '2030-06-01T07:00:00.000Z',
          arrivalTime: '2030-06-01T15:00:00.000Z',
          previousLegs: { from: 0, to: 1 },
        },
      },
    ],
  });

  expect(longer).toMatchObject({
    status: 'CONFIRMED',
    segment: { alightingStopCode: 'BER', alightingPosition: 2 },
    price: { total: { amountMinor: price.amountMinor * 2 } },
  });
  expect(activitiesOf(booking).slice(-6)).toEqual([
    'ReserveSeats',
    'ConfirmSeats',
    'ProcessPayment',
    'ReleaseSeats',
    'IssueTickets',
    'SendEmailNotification',
  ]);
  // Operators find the booking by its stops: the search attributes follow the segment.
  const { typedSearchAttributes } = await booking.handle.describe();
  expect(typedSearchAttributes.get(searchAttributes.boardingStop)).toBe('AMS');
  expect(typedSearchAttributes.get(searchAttributes.alightingStop)).toBe('BER');
  const seatCalls = booking.calls.filter((call) => ['ReserveSeats', 'ReleaseSeats'].includes(call.activity));
  expect(seatCalls.map((call) => [call.activity, call.input.legs ?? call.input.keepLegs])).toEqual([
    ['ReserveSeats', { from: 0, to: 1 }],
    ['ReserveSeats', { from: 0, to: 2 }],
    ['ReleaseSeats', { from: 0, to: 2 }],
  ]);
});
