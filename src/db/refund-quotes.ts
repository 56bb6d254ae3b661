// Refund quotes in PostgreSQL: stored as the domain's RefundQuote, read back by id, purged a day on; a booking's refund terms.
import type { Knex } from 'knex';
import type { Boarding, RefundRule } from '../domain/booking';
import { defaultRefundRule } from '../domain/fares';
import type { RefundQuote } from '../domain/refund-quotes';
import { hourMs } from '../domain/time';
import { isUuid } from '../domain/validation';

interface RefundQuoteRow {
  id: string;
  booking_id: string;
  quote: RefundQuote;
  valid_until: Date;
  created_at: Date;
}

/** How long a quote is kept after it was made: long past its validity, for support to read what was promised. */
export const refundQuoteRetentionMs = 24 * hourMs;

export async function storeRefundQuote(database: Knex | Knex.Transaction, quote: RefundQuote): Promise<void> {
  await database('refund_quotes').insert({
    id: quote.id,
    booking_id: quote.bookingId,
    quote: JSON.stringify(quote),
    valid_until: quote.validUntil,
    created_at: quote.quotedAt,
  });
}

/** The quote as it was stored; undefined for an unknown id, or one that is not a UUID at all. */
export async function readRefundQuote(
  database: Knex | Knex.Transaction,
  quoteId: string,
): Promise<RefundQuote | undefined> {
  if (!isUuid(quoteId)) return undefined;
  const row: Pick<RefundQuoteRow, 'quote'> | undefined = await database('refund_quotes')
    .where({ id: quoteId.toLowerCase() })
    .first('quote');
  return row?.quote;
}

/** Deletes quotes made before `now` less the retention; answers how many went. */
export async function purgeRefundQuotes(database: Knex, now: Date = new Date()): Promise<number> {
  return database('refund_quotes')
    .where('created_at', '<', new Date(now.getTime() - refundQuoteRetentionMs))
    .delete();
}

/** What a quote needs of a booking that its read-model view leaves out. */
export interface BookingRefundTerms {
  readonly refundRule: RefundRule;
  /** Only `passengerId` and when and where they boarded are kept in the read model. */
  readonly boardings: readonly Boarding[];
}

interface BoardedPassengerRow {
  id: string;
  boarded_at: Date;
  boarded_stop: string;
  boarded_by: string | null;
  boarded_device: string | null;
}

/** The booking's refund rule and who of its passengers boarded; undefined when the booking has no row. */
export async function readBookingRefundTerms(
  database: Knex,
  bookingId: string,
): Promise<BookingRefundTerms | undefined> {
  const booking: { refund_rule: RefundRule | null } | undefined = await database('bookings')
    .where({ id: bookingId })
    .first('refund_rule');
  if (booking === undefined) return undefined;
  const boarded: BoardedPassengerRow[] = await database('passengers')
    .where({ booking_id: bookingId, boarding_status: 'BOARDED' })
    .orderBy('boarded_at')
    .select('id', 'boarded_at', 'boarded_stop', 'boarded_by', 'boarded_device');
  return {
    // A row written before the read model kept the rule: every such booking was made under the standard one.
    refundRule: booking.refund_rule ?? defaultRefundRule,
    boardings: boarded.map((row) => ({
      passengerId: row.id,
      boardedAt: row.boarded_at.toISOString(),
      stopCode: row.boarded_stop,
      actorId: row.boarded_by ?? '',
      ...(row.boarded_device === null ? {} : { deviceId: row.boarded_device }),
    })),
  };
}
