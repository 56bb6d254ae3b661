// A trip's fares as one JSON column of a trip read, and that column parsed: the one definition every trip read shares.
import type { FareClass, FarePrices } from '../domain/booking';
import { money } from '../domain/money';
import { parseInt8 } from './connection';

/** A fares column as PostgreSQL sends it: [fare class, amount in minor units as text (bigint), currency]. */
export type TripFaresColumn = [FareClass, string, string][];

export interface TripFare {
  fareClass: FareClass;
  amountMinor: number;
  currency: string;
}

/** Aliases are the queries' own constants; anything else is a programming error, never input to interpolate. */
const aliasPattern = /^[a-z_]+$/;

/**
 * The scalar subquery of the fares of the trip aliased `tripAlias` in the surrounding query, as a TripFaresColumn
 * (an empty array for a trip without fares).
 */
export function tripFaresSql(tripAlias: string): string {
  if (!aliasPattern.test(tripAlias)) throw new RangeError(`not a table alias: ${tripAlias}`);
  return `(SELECT coalesce(json_agg(json_build_array(fare.fare_class, fare.amount_minor::text, fare.currency)),
                   '[]'::json)
             FROM trip_fares AS fare WHERE fare.trip_id = ${tripAlias}.id)`;
}

/** The fares of a TripFaresColumn, amounts as numbers and currency codes without the column's padding. */
export function tripFaresOf(column: TripFaresColumn): TripFare[] {
  return column.map(([fareClass, amountMinor, currency]) => ({
    fareClass,
    amountMinor: parseInt8(amountMinor),
    currency: currency.trim(),
  }));
}

/** The fares of a TripFaresColumn as prices per class. */
export function farePricesOf(column: TripFaresColumn): FarePrices {
  const farePrices: Partial<Record<FareClass, ReturnType<typeof money>>> = {};
  for (const fare of tripFaresOf(column)) farePrices[fare.fareClass] = money(fare.amountMinor, fare.currency);
  return farePrices;
}
