// Discount codes in PostgreSQL: creation, reads, the listing, and redemptions counted safely under concurrency.
import type { Knex } from 'knex';
import {
  assertRedeemable,
  discountCodeInvalid,
  isDiscountCode,
  normaliseDiscountCode,
  unknownDiscountCode,
  type DiscountCode,
  type DiscountCodeDraft,
} from '../domain/discount-codes';
import { validationFailed } from '../domain/errors';
import { toTimestamp } from '../domain/time';
import { pageWindow, readPage, type KeysetListing, type PageRequest } from './paging';
import { isPostgresError, postgresErrorCodes } from './postgres-errors';

interface DiscountCodeRow {
  code: string;
  kind: DiscountCode['kind'];
  value: number;
  currency: string | null;
  valid_from: Date;
  valid_until: Date;
  route_ids: string[];
  max_usages: number;
  usages: number;
  created_by: string;
  created_at: Date;
}

/** A code as stored: its terms and usages, who created it and when. */
export interface StoredDiscountCode extends DiscountCode {
  readonly createdBy: string;
  readonly createdAt: string;
}

function codeOf(row: DiscountCodeRow): StoredDiscountCode {
  return {
    code: row.code,
    kind: row.kind,
    value: row.value,
    ...(row.currency === null ? {} : { currency: row.currency.trim() }),
    validFrom: toTimestamp(row.valid_from),
    validUntil: toTimestamp(row.valid_until),
    routeIds: row.route_ids,
    maxUsages: row.max_usages,
    usages: row.usages,
    createdBy: row.created_by,
    createdAt: toTimestamp(row.created_at),
  };
}

/** Stores a validated draft (validateDiscountCodeInput) with no usages; a code taken already is a 400 on `code`. */
export async function createDiscountCode(
  database: Knex,
  draft: DiscountCodeDraft,
  createdBy: string,
): Promise<StoredDiscountCode> {
  try {
    const [row] = (await database('discount_codes')
      .insert({
        code: draft.code,
        kind: draft.kind,
        value: draft.value,
        currency: draft.currency ?? null,
        valid_from: new Date(draft.validFrom),
        valid_until: new Date(draft.validUntil),
        route_ids: [...draft.routeIds],
        max_usages: draft.maxUsages,
        created_by: createdBy,
      })
      .returning('*')) as DiscountCodeRow[];
    return codeOf(row);
  } catch (error) {
    if (isPostgresError(error, postgresErrorCodes.uniqueViolation, 'discount_codes_pkey')) {
      throw validationFailed([{ field: 'code', message: `the code ${draft.code} exists already` }]);
    }
    throw error;
  }
}

/** The code as typed (any case, spaces around it), or undefined when there is none. */
export async function readDiscountCode(
  database: Knex | Knex.Transaction,
  code: string,
): Promise<StoredDiscountCode | undefined> {
  const normalised = normaliseDiscountCode(code);
  if (!isDiscountCode(normalised)) return undefined;
  const row = (await database('discount_codes').where({ code: normalised }).first()) as
    DiscountCodeRow | undefined;
  return row === undefined ? undefined : codeOf(row);
}

export const discountCodeListing: KeysetListing<DiscountCodeRow, string> = {
  name: 'discount-codes',
  positionOf: (row) => row.code,
  readPosition: (value) => (isDiscountCode(value) ? value : undefined),
};

/** Every code in code order, a page at a time (AIP-158 page tokens, as every listing). */
export async function listDiscountCodes(
  database: Knex,
  request: PageRequest,
): Promise<{ codes: StoredDiscountCode[]; nextPageToken?: string }> {
  const window = pageWindow(discountCodeListing, request, {});
  const query = database('discount_codes').orderBy('code');
  if (window.after !== undefined) void query.where('code', '>', window.after);
  const page = await readPage(window, query);
  return {
    codes: page.rows.map(codeOf),
    ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }),
  };
}

export interface Redemption {
  readonly code: string;
  readonly bookingId: string;
  readonly redeemedAt: string;
  readonly releasedAt?: string;
}

interface RedemptionRow {
  code: string;
  booking_id: string;
  redeemed_at: Date;
  released_at: Date | null;
}

function redemptionOf(row: RedemptionRow): Redemption {
  return {
    code: row.code,
    bookingId: row.booking_id,
    redeemedAt: toTimestamp(row.redeemed_at),
    ...(row.released_at === null ? {} : { releasedAt: toTimestamp(row.released_at) }),
  };
}

export async function readRedemption(
  database: Knex | Knex.Transaction,
  code: string,
  bookingId: string,
): Promise<Redemption | undefined> {
  const row = (await database('discount_redemptions')
    .where({ code: normaliseDiscountCode(code), booking_id: bookingId })
    .first()) as RedemptionRow | undefined;
  return row === undefined ? undefined : redemptionOf(row);
}

/** The route and currency the redemption is for; each, when given, must suit the code as assertRedeemable says. */
export interface RedemptionTerms {
  readonly routeId?: string;
  readonly currency?: string;
}

export interface RedeemedCode {
  /** The code after this redemption. */
  readonly code: StoredDiscountCode;
  /** False when this booking had redeemed it already: nothing was counted again. */
  readonly newlyRedeemed: boolean;
}

/** Thrown inside the transaction to roll the redemption row back when the code could not be counted. */
class NotCounted extends Error {}

/**
 * Redeems `code` for `bookingId` at `at`: the redemption row and one more usage in one transaction, the usage a
 * single conditional UPDATE (fewer usages than the maximum, `at` inside the code's dates, the route and currency
 * when given), so concurrent redemptions never count past the maximum. The same booking again counts nothing;
 * a booking whose redemption was given back cannot redeem the code again. A code that cannot be redeemed is the
 * DISCOUNT_CODE_INVALID assertRedeemable names.
 */
export async function redeemDiscountCode(
  database: Knex,
  code: string,
  bookingId: string,
  at: Date,
  terms: RedemptionTerms = {},
): Promise<RedeemedCode> {
  const normalised = normaliseDiscountCode(code);
  const context = {
    requestedCode: normalised,
    ...(terms.routeId === undefined ? {} : { routeId: terms.routeId }),
    at: toTimestamp(at),
    ...(terms.currency === undefined ? {} : { currency: terms.currency }),
  };
  if (!isDiscountCode(normalised)) throw unknownDiscountCode(normalised);
  try {
    return await database.transaction(async (transaction) => {
      const inserted = await transaction.raw<{ rows: unknown[] }>(
        `INSERT INTO discount_redemptions (code, booking_id, redeemed_at)
         SELECT code, ?, ? FROM discount_codes WHERE code = ?
         ON CONFLICT (code, booking_id) DO NOTHING
         RETURNING code`,
        [bookingId, at, normalised],
      );
      if (inserted.rows.length === 0) {
        const earlier = await readRedemption(transaction, normalised, bookingId);
        const current = await readDiscountCode(transaction, normalised);
        if (earlier === undefined || current === undefined) throw unknownDiscountCode(normalised);
        if (earlier.releasedAt !== undefined) {
          throw discountCodeInvalid(
            normalised,
            'released',
            `Discount code ${normalised} was given back by this booking at ${earlier.releasedAt} and cannot be redeemed by it again`,
          );
        }
        return { code: current, newlyRedeemed: false };
      }
      const counted = await transaction.raw<{ rows: DiscountCodeRow[] }>(
        `UPDATE discount_codes SET usages = usages + 1
          WHERE code = ? AND usages < max_usages AND valid_from <= ? AND valid_until > ?
            AND (cardinality(route_ids) = 0 OR ?::uuid IS NULL OR ?::uuid = ANY (route_ids))
            AND (kind <> 'amount' OR ?::text IS NULL OR currency = ?::text)
          RETURNING *`,
        [
          normalised,
          at,
          at,
          terms.routeId ?? null,
          terms.routeId ?? null,
          terms.currency ?? null,
          terms.currency ?? null,
        ],
      );
      if (counted.rows.length === 0) throw new NotCounted();
      return { code: codeOf(counted.rows[0]), newlyRedeemed: true };
    });
  } catch (error) {
    if (!(error instanceof NotCounted)) throw error;
    // Say which rule stopped it, read after the rollback; a code that looks redeemable again had its last usage
    // given back meanwhile, and was used up when this redemption was counted.
    assertRedeemable(await readDiscountCode(database, normalised), context);
    throw discountCodeInvalid(normalised, 'used_up', `Discount code ${normalised} has been used up`);
  }
}

/**
 * Gives `bookingId`'s redemption of `code` back: released_at set and one usage less, in one statement, once. True
 * when this call gave it back; false when there was nothing to give (never redeemed, or given back already).
 */
export async function releaseDiscountCode(
  database: Knex,
  code: string,
  bookingId: string,
  at?: Date,
): Promise<boolean> {
  const result = await database.raw<{ rows: unknown[] }>(
    `WITH released AS (
       UPDATE discount_redemptions SET released_at = coalesce(?::timestamptz, now())
        WHERE code = ? AND booking_id = ? AND released_at IS NULL
        RETURNING code
     )
     UPDATE discount_codes SET usages = usages - 1 WHERE code IN (SELECT code FROM released) RETURNING code`,
    [at ?? null, normaliseDiscountCode(code), bookingId],
  );
  return result.rows.length > 0;
}

/** Gives back every redemption of the booking not given back yet (its expiry or cancellation); the codes released. */
export async function releaseBookingDiscountCodes(
  database: Knex,
  bookingId: string,
  at?: Date,
): Promise<string[]> {
  const result = await database.raw<{ rows: { code: string }[] }>(
    `WITH released AS (
       UPDATE discount_redemptions SET released_at = coalesce(?::timestamptz, now())
        WHERE booking_id = ? AND released_at IS NULL
        RETURNING code
     )
     UPDATE discount_codes SET usages = usages - 1 WHERE code IN (SELECT code FROM released) RETURNING code`,
    [at ?? null, bookingId],
  );
  return result.rows.map((row) => row.code).sort();
}
