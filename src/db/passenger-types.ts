// A route's passenger types in PostgreSQL: read (the default set when the route has none) and replaced as a whole.
import type { Knex } from 'knex';
import { money } from '../domain/money';
import { assertPassengerTypeSet, defaultPassengerTypes, type PassengerType } from '../domain/passenger-types';

interface PassengerTypeRow {
  route_id: string;
  code: string;
  name: string;
  position: number;
  min_age: number;
  max_age: number;
  price_kind: 'share' | 'per_segment';
  price_percent: number | null;
  price_amount_minor: number | null;
  price_currency: string | null;
  takes_seat: boolean;
  birth_date_required: boolean;
  requires_companion: string[];
}

function typeOf(row: PassengerTypeRow): PassengerType {
  return {
    code: row.code,
    name: row.name,
    minAge: row.min_age,
    maxAge: row.max_age,
    priceRule:
      row.price_kind === 'share'
        ? { kind: 'share', percent: row.price_percent ?? 0 }
        : {
            kind: 'per_segment',
            amount: money(row.price_amount_minor ?? 0, (row.price_currency ?? '').trim()),
          },
    takesSeat: row.takes_seat,
    birthDateRequired: row.birth_date_required,
    ...(row.requires_companion.length === 0 ? {} : { requiresCompanion: row.requires_companion }),
  };
}

/** The types the route sells, in their order; the default set when it lists none of its own. */
export async function readPassengerTypes(
  database: Knex | Knex.Transaction,
  routeId: string,
): Promise<readonly PassengerType[]> {
  const rows = (await database('passenger_types')
    .where({ route_id: routeId })
    .orderBy('position')) as PassengerTypeRow[];
  return rows.length === 0 ? defaultPassengerTypes : rows.map(typeOf);
}

/** Makes `types` the route's whole set (checked as a set first); an empty list gives it the default set again. */
export async function replacePassengerTypes(
  database: Knex,
  routeId: string,
  types: readonly PassengerType[],
): Promise<void> {
  if (types.length > 0) assertPassengerTypeSet(types);
  await database.transaction(async (transaction) => {
    await transaction('passenger_types').where({ route_id: routeId }).delete();
    if (types.length === 0) return;
    await transaction('passenger_types').insert(
      types.map((type, index) => ({
        route_id: routeId,
        code: type.code,
        name: type.name,
        position: index + 1,
        min_age: type.minAge,
        max_age: type.maxAge,
        price_kind: type.priceRule.kind,
        price_percent: type.priceRule.kind === 'share' ? type.priceRule.percent : null,
        price_amount_minor: type.priceRule.kind === 'per_segment' ? type.priceRule.amount.amountMinor : null,
        price_currency: type.priceRule.kind === 'per_segment' ? type.priceRule.amount.currency : null,
        takes_seat: type.takesSeat,
        birth_date_required: type.birthDateRequired,
        requires_companion: [...(type.requiresCompanion ?? [])],
      })),
    );
  });
}
