// Cancelling some passengers over the application on the real saga: seats, ledger and tickets, quotes, and the race with a change and a payment.
import { expect } from '@jest/globals';
import type { Knex } from 'knex';
import {
  createBookingApplication,
  type BookingApplicationDependencies,
} from '../../../src/application/bookings';
import type { BookingApplication, BookingView } from '../../../src/application/interface';
import type { BookingState } from '../../../src/domain/booking';
import { findDomainError } from '../../../src/domain/errors';
import { outstandingBalance } from '../../../src/domain/fares';
import { quoteRefund, type RefundQuote } from '../../../src/domain/refund-quotes';
import { bookingStateQuery, bookingWorkflowId } from '../../../src/workflows/shared';
import { useSagaTestBed } from '../../support/saga';
import { doublyHeldSeats, paymentLedger } from '../../support/booking-records';
import { bookingRequest, standardPriceMinor } from '../../support/trips';
import { domainErrorOf, eventually } from '../../support/outcomes';

jest.setTimeout(240_000);

const hourMs = 60 * 60 * 1000;
const raceRounds = 10;

// Twelve hours before departure the standard rule gives half back; three legs, so "every leg" means something.
const testBed = useSagaTestBed({ seatCount: 64, departureInMs: 12 * hourMs, middleStops: 2 });

const quotes = new Map<string, RefundQuote>();
let withQuotes: BookingApplication;
let nextSeat = 0;

beforeAll(() => {
  const { saga } = testBed;
  const dependencies: BookingApplicationDependencies = {
    config: saga.config,
    database: saga.database,
    temporal: saga.client,
    cipher: saga.cipher,
    timings: saga.timings,
    taskQueues: saga.taskQueueNames,
    readQuote: (quoteId) => Promise.resolve(quotes.get(quoteId)),
  };
  withQuotes = createBookingApplication(dependencies);
});

function freshSeats(count: number): string[] {
  const seats = testBed.trip.seatNumbers.slice(nextSeat, nextSeat + count);
  nextSeat += count;
  return seats;
}

async function confirmedFamily(): Promise<BookingView> {
  const { saga, trip, customer } = testBed;
  const pending = await saga.application.createBooking(customer, bookingRequest(trip, freshSeats(3)));
  return saga.application.confirmPayment(customer, pending.id, { paymentToken: 'tok_visa' });
}

/** Every allocation row of the booking still held or booked: seat, legs, state. */
async function allocationsOf(database: Knex, bookingId: string) {
  const rows: { seat_number: string; legs: string; state: string }[] = await database('seat_allocations')
    .where({ booking_id: bookingId })
    .whereIn('state', ['HELD', 'BOOKED'])
    .select('seat_number', database.raw('legs::text AS legs'), 'state');
  return rows;
}

/** The booking's tickets not revoked, as `passenger:seat`, sorted. */
async function validTicketsOf(database: Knex, bookingId: string): Promise<string[]> {
  const rows: { passenger_id: string; seat: string }[] = await database('tickets')
    .where({ booking_id: bookingId })
    .whereNull('revoked_at')
    .select('passenger_id', 'seat');
  return rows.map((row) => `${row.passenger_id}:${row.seat}`).sort();
}

async function revokedTicketsOf(database: Knex, bookingId: string): Promise<string[]> {
  const rows: { passenger_id: string; revoked_reason: string }[] = await database('tickets')
    .where({ booking_id: bookingId })
    .whereNotNull('revoked_at')
    .select('passenger_id', 'revoked_reason');
  return rows.map((row) => `${row.passenger_id}:${row.revoked_reason}`).sort();
}

function travellingTickets(booking: Pick<BookingView, 'passengers'>): string[] {
  return booking.passengers.map((passenger) => `${passenger.id}:${passenger.seatNumber}`).sort();
}

test('a family of three, confirmed: one passenger cancelled — their seat free on every leg, half their fare refunded, only their ticket revoked', async () => {
  const { saga, customer } = testBed;
  const family = await confirmedFamily();
  const [stays, leaves, alsoStays] = family.passengers;
  const legsBefore = (await allocationsOf(saga.database, family.id)).filter(
    (row) => row.seat_number === leaves.seatNumber,
  );
  expect(legsBefore.length).toBeGreaterThan(0);

  const after = await saga.application.cancelPassengers(customer, family.id, {
    passengerIds: [leaves.id],
    reason: 'Ill',
  });

  expect(after).toMatchObject({
    status: 'CONFIRMED',
    price: { total: { amountMinor: 2 * standardPriceMinor } },
    amountRefunded: { amountMinor: standardPriceMinor / 2 },
    cancelledPassengers: [
      { passengerId: leaves.id, paid: { amountMinor: standardPriceMinor }, refund: { amountMinor: 1250 } },
    ],
  });
  expect(after.passengers.map((passenger) => passenger.id)).toEqual([stays.id, alsoStays.id]);
  const allocations = await allocationsOf(saga.database, family.id);
  expect(allocations.map((row) => row.seat_number).sort()).toEqual(
    [stays.seatNumber, alsoStays.seatNumber].sort(),
  );
  expect(await doublyHeldSeats(saga.database, testBed.trip.tripId)).toEqual([]);
  const ledger = await paymentLedger(saga.database, family.id);
  expect(ledger).toMatchObject({ charges: [3 * standardPriceMinor], refunds: [standardPriceMinor / 2] });
  expect(await validTicketsOf(saga.database, family.id)).toEqual(travellingTickets(after));
  expect(await revokedTicketsOf(saga.database, family.id)).toEqual([`${leaves.id}:PASSENGER_REMOVED`]);
  expect(await saga.application.getBooking(customer, family.id)).toEqual(after);

  // Cancelling the last two cancels the booking: the rule's share of what they paid, what was kept stays kept.
  const cancelled = await saga.application.cancelPassengers(customer, family.id, {
    passengerIds: [stays.id, alsoStays.id],
  });
  expect(cancelled.status).toBe('CANCELLED');
  expect(await allocationsOf(saga.database, family.id)).toEqual([]);
  expect((await paymentLedger(saga.database, family.id)).refunds).toEqual([1250, 2500]);
  expect(await validTicketsOf(saga.database, family.id)).toEqual([]);
});

test('through a quote: the refund is exactly the quote; an unknown, foreign, stale or expired quote changes nothing', async () => {
  const { saga, customer } = testBed;
  const family = await confirmedFamily();
  const other = await confirmedFamily();
  const [, child] = family.passengers;
  const state = await saga.client.workflow.getHandle(bookingWorkflowId(family.id)).query(bookingStateQuery);
  const quoteAt = (booking: BookingState, id: string, now: Date, validForMs?: number) => {
    const quote = quoteRefund({
      booking,
      passengerIds: [child.id],
      id,
      now: now.toISOString(),
      ...(validForMs === undefined ? {} : { validForMs }),
    });
    quotes.set(id, quote);
    return quote;
  };
  const quote = quoteAt(state!, '5f6a7b8c-9d0e-4f1a-8b2c-3d4e5f6a7b01', new Date());
  const expired = quoteAt(state!, '5f6a7b8c-9d0e-4f1a-8b2c-3d4e5f6a7b02', new Date(Date.now() - hourMs), 1);

  expect(
    (
      await domainErrorOf(
        withQuotes.cancelPassengers(customer, family.id, {
          passengerIds: [child.id],
          quoteId: '5f6a7b8c-9d0e-4f1a-8b2c-3d4e5f6a7bff',
        }),
      )
    )?.code,
  ).toBe('NOT_FOUND');
  expect(
    (
      await domainErrorOf(
        withQuotes.cancelPassengers(customer, other.id, { passengerIds: [child.id], quoteId: quote.id }),
      )
    )?.details,
  ).toMatchObject({ reason: 'other_booking' });
  expect(
    (
      await domainErrorOf(
        withQuotes.cancelPassengers(customer, family.id, { passengerIds: [child.id], quoteId: expired.id }),
      )
    )?.code,
  ).toBe('QUOTE_EXPIRED');
  expect((await paymentLedger(saga.database, family.id)).refunds).toEqual([]);

  const after = await withQuotes.cancelPassengers(customer, family.id, {
    passengerIds: [child.id],
    quoteId: quote.id,
  });
  expect((await paymentLedger(saga.database, family.id)).refunds).toEqual([quote.total.amountMinor]);
  expect(after.cancelledPassengers).toEqual([
    {
      passengerId: child.id,
      cancelledAt: expect.any(String),
      paid: quote.lines[0].paid,
      refund: quote.total,
    },
  ]);

  // The same quote again: the booking has changed since it was made.
  const [first] = after.passengers;
  const stale = { ...quote, id: '5f6a7b8c-9d0e-4f1a-8b2c-3d4e5f6a7b03', passengerIds: [first.id] };
  quotes.set(stale.id, stale);
  expect(
    (
      await domainErrorOf(
        withQuotes.cancelPassengers(customer, family.id, { passengerIds: [first.id], quoteId: stale.id }),
      )
    )?.details,
  ).toMatchObject({ reason: 'booking_changed' });
});

interface RoundFigures {
  round: number;
  cancel: string;
  seatChange: string;
  payment: string;
  /** Whether the payment was taken before the passenger left (their share then comes back as a refund). */
  paidBeforeCancel: boolean;
  status: string;
  capturedMinor: number;
  refundedMinor: number;
  version: number;
}

function outcomeOf(answer: PromiseSettledResult<BookingView>): string {
  if (answer.status === 'fulfilled') return 'ok';
  return findDomainError(answer.reason)?.code ?? String(answer.reason);
}

test(`the race: a partial cancel, another passenger's seat change and the payment fired together, ${raceRounds} rounds — seats, ledger and tickets agree with the booking`, async () => {
  const { saga, trip, customer } = testBed;
  const figures: RoundFigures[] = [];
  for (let round = 1; round <= raceRounds; round += 1) {
    const [seatA, seatB, seatC, newSeat] = freshSeats(4);
    const pending = await saga.application.createBooking(
      customer,
      bookingRequest(trip, [seatA, seatB, seatC]),
    );
    const [mover, leaver] = pending.passengers;

    const answers = await Promise.allSettled([
      saga.application.cancelPassengers(customer, pending.id, { passengerIds: [leaver.id] }),
      saga.application.updateBooking(customer, pending.id, {
        seatChanges: [{ passengerId: mover.id, seatNumber: newSeat }],
      }),
      saga.application.confirmPayment(customer, pending.id, { paymentToken: 'tok_visa' }),
    ]);

    const state = await saga.client.workflow
      .getHandle(bookingWorkflowId(pending.id))
      .query(bookingStateQuery);
    const booking = await eventually(
      () => saga.application.getBooking(customer, pending.id),
      (read) => read.version === state!.version,
    );
    const ledger = await paymentLedger(saga.database, pending.id);
    const allocations = await allocationsOf(saga.database, pending.id);
    figures.push({
      round,
      cancel: outcomeOf(answers[0]),
      seatChange: outcomeOf(answers[1]),
      payment: outcomeOf(answers[2]),
      paidBeforeCancel: ledger.refunds.length > 0,
      status: booking.status,
      capturedMinor: ledger.capturedMinor,
      refundedMinor: ledger.refundedMinor,
      version: booking.version,
    });

    // Seats: exactly the travelling passengers' seats, each held or booked on every leg, none for the one who left.
    const expectedState = booking.status === 'CONFIRMED' ? 'BOOKED' : 'HELD';
    expect(allocations.map((row) => row.seat_number).sort()).toEqual(
      booking.passengers.map((passenger) => passenger.seatNumber).sort(),
    );
    expect(allocations.every((row) => row.state === expectedState && row.legs === '[0,3)')).toBe(true);
    expect(booking.passengers.map((passenger) => passenger.id)).not.toContain(leaver.id);
    // Ledger: what really moved is what the booking says it kept, and what its state owes.
    expect(ledger.capturedMinor - ledger.refundedMinor).toBe(
      state!.amountPaid.amountMinor - state!.amountRefunded.amountMinor,
    );
    expect(outstandingBalance(state!).amountMinor).toBe(0);
    // Tickets: valid exactly for the travelling passengers on their current seats.
    expect(await validTicketsOf(saga.database, pending.id)).toEqual(
      booking.status === 'CONFIRMED' ? travellingTickets(booking) : [],
    );
  }
  expect(await doublyHeldSeats(saga.database, trip.tripId)).toEqual([]);
  console.log(`partial-cancel race figures\n${JSON.stringify(figures, null, 1)}`);
  expect(
    figures.every((round) => round.cancel === 'ok' && round.seatChange === 'ok' && round.payment === 'ok'),
  ).toBe(true);
});
