// Refund quotes in PostgreSQL: kept whole and read back by id, purged after a day; a booking's refund terms as stored.
import { randomUUID } from 'node:crypto';
import { writeBookingSnapshot } from '../../../src/db/booking-read-model';
import {
  purgeRefundQuotes,
  readBookingRefundTerms,
  readRefundQuote,
  refundQuoteRetentionMs,
  storeRefundQuote,
} from '../../../src/db/refund-quotes';
import type { BookingState, RefundRule } from '../../../src/domain/booking';
import { defaultRefundRule } from '../../../src/domain/fares';
import { quoteRefund, type RefundQuote } from '../../../src/domain/refund-quotes';
import { bookingSnapshot, testPassenger, useActivityTestBed } from '../../support/activities';

const testBed = useActivityTestBed();

const strictRule: RefundRule = {
  name: 'strict-test',
  tiers: [{ minimumNoticeMs: 72 * 3_600_000, refundPercent: 80 }],
  afterDepartureRefundPercent: 0,
};

let seatsGiven = 0;

async function storedBooking(overrides: Partial<BookingState> = {}): Promise<BookingState> {
  const seats = testBed.trip.seatNumbers.slice(seatsGiven, (seatsGiven += 2));
  const snapshot = bookingSnapshot(
    testBed.trip,
    seats.map((seat) => testPassenger(seat)),
    overrides,
  );
  await testBed.database.transaction((transaction) =>
    writeBookingSnapshot(transaction, snapshot, testBed.cipher),
  );
  return snapshot;
}

function quoteOf(booking: BookingState, quotedAt: Date): RefundQuote {
  return quoteRefund({ booking, id: randomUUID(), now: quotedAt.toISOString() });
}

describe('refund quotes', () => {
  it('are read back exactly as stored, by an id in either case; an unknown or malformed id reads nothing', async () => {
    const booking = await storedBooking();
    const quote = quoteOf(booking, new Date());
    await storeRefundQuote(testBed.database, quote);
    expect(await readRefundQuote(testBed.database, quote.id)).toEqual(quote);
    expect(await readRefundQuote(testBed.database, quote.id.toUpperCase())).toEqual(quote);
    expect(await readRefundQuote(testBed.database, randomUUID())).toBeUndefined();
    expect(await readRefundQuote(testBed.database, 'not-a-quote')).toBeUndefined();
  });

  it('are purged a day after they were made, not before', async () => {
    const booking = await storedBooking();
    const now = new Date();
    const old = quoteOf(booking, new Date(now.getTime() - refundQuoteRetentionMs - 60_000));
    const recent = quoteOf(booking, new Date(now.getTime() - refundQuoteRetentionMs + 60_000));
    await storeRefundQuote(testBed.database, old);
    await storeRefundQuote(testBed.database, recent);
    expect(await purgeRefundQuotes(testBed.database, now)).toBeGreaterThanOrEqual(1);
    expect(await readRefundQuote(testBed.database, old.id)).toBeUndefined();
    expect(await readRefundQuote(testBed.database, recent.id)).toEqual(recent);
  });

  it('go with their booking', async () => {
    const booking = await storedBooking();
    const quote = quoteOf(booking, new Date());
    await storeRefundQuote(testBed.database, quote);
    await testBed.database('passengers').where({ booking_id: booking.id }).delete();
    await testBed.database('bookings').where({ id: booking.id }).delete();
    expect(await readRefundQuote(testBed.database, quote.id)).toBeUndefined();
  });
});

describe("a booking's refund terms", () => {
  it('are the rule the snapshot was made under, and who boarded', async () => {
    const booking = await storedBooking({ refundRule: strictRule });
    const boardedAt = new Date('2026-12-01T08:00:00.000Z');
    await testBed.database('passengers').where({ id: booking.passengers[1].id }).update({
      boarding_status: 'BOARDED',
      boarded_at: boardedAt,
      boarded_stop: 'LIS',
      boarded_by: 'driver-1',
    });
    expect(await readBookingRefundTerms(testBed.database, booking.id)).toEqual({
      refundRule: strictRule,
      boardings: [
        {
          passengerId: booking.passengers[1].id,
          boardedAt: boardedAt.toISOString(),
          stopCode: 'LIS',
          actorId: 'driver-1',
        },
      ],
    });
  });

  it('are the standard rule for a row written before the read model kept it', async () => {
    const booking = await storedBooking({ refundRule: strictRule });
    await testBed.database('bookings').where({ id: booking.id }).update({ refund_rule: null });
    expect(await readBookingRefundTerms(testBed.database, booking.id)).toEqual({
      refundRule: defaultRefundRule,
      boardings: [],
    });
  });

  it('are nothing for a booking without a row', async () => {
    expect(await readBookingRefundTerms(testBed.database, randomUUID())).toBeUndefined();
  });
});
