// Idempotent demo data: network, timetable for the coming days, fares and one account per role (the demo bookings
// are made through the API once the stack runs; see demo-bookings.ts).
import { hash } from '@node-rs/argon2';
import type { Knex } from 'knex';
import type { FieldCipher } from '../../src/security/field-encryption';
import { emailLookup } from '../../src/db/user-email';
import { demoUsers, type DemoUser } from './demo-users';
import { loadTestUsers, seedsLoadTestUsers } from './load-test-users';
import { demoLayouts, demoRoutes, demoStops, premiumFareMinor, SEAT_LETTERS } from './network';

export * from './demo-bookings';
export * from './demo-users';
export * from './load-test-users';
export * from './network';

export const DEFAULT_SEED_DAYS = 60;

export interface SeedOptions {
  cipher: FieldCipher;
  /** First timetable day, a calendar date taken as the local date at each route's origin; a Date counts by its UTC date. */
  today: string | Date;
  /** Number of timetable days from `today`, `today` included. */
  days?: number;
  /** Where the data goes: development and test also get the load-test accounts; production, or none given, does not. */
  environment?: 'development' | 'production' | 'test';
}

export interface SeedSummary {
  stopsInserted: number;
  routesInserted: number;
  layoutsInserted: number;
  tripsInserted: number;
  faresInserted: number;
  usersInserted: number;
}

/**
 * Inserts only what is missing (ON CONFLICT DO NOTHING), so it can run at every start: a later `today` tops the
 * timetable up to `today + days`. Departure times are wall-clock times at the origin; PostgreSQL's time zone
 * database turns them into instants, daylight saving time included.
 */
export async function seedDemoData(database: Knex, options: SeedOptions): Promise<SeedSummary> {
  const firstDay = calendarDate(options.today);
  const days = options.days ?? DEFAULT_SEED_DAYS;
  if (!Number.isInteger(days) || days < 1)
    throw new RangeError(`days must be a positive integer, got ${days}`);

  const accounts = seedsLoadTestUsers(options.environment) ? [...demoUsers, ...loadTestUsers] : demoUsers;
  const newUsers = await prepareMissingUsers(database, options.cipher, accounts);

  return database.transaction(async (transaction) => {
    const stopsInserted = await insertIgnoringExisting(
      transaction('stops')
        .insert(
          demoStops.map((stop) => ({
            code: stop.code,
            name: stop.name,
            city: stop.city,
            country_code: stop.countryCode,
            time_zone: stop.timeZone,
          })),
        )
        .onConflict('code')
        .ignore()
        .returning('code'),
    );

    const routesInserted = await insertIgnoringExisting(
      transaction('routes')
        .insert(
          demoRoutes.map((route) => ({
            code: route.code,
            origin_stop_code: route.originStopCode,
            destination_stop_code: route.destinationStopCode,
            operator_name: route.operatorName,
            distance_km: route.distanceKm,
            typical_duration_minutes: route.typicalDurationMinutes,
          })),
        )
        .onConflict('code')
        .ignore()
        .returning('id'),
    );
    const routeIds = await idsByCode(
      transaction,
      'routes',
      demoRoutes.map((route) => route.code),
    );
    await transaction('route_stops')
      .insert(
        demoRoutes.flatMap((route) =>
          route.intermediateStops.map((stop, index) => ({
            route_id: routeIds.get(route.code),
            position: index + 1,
            stop_code: stop.stopCode,
            minutes_from_origin: stop.minutesFromOrigin,
          })),
        ),
      )
      .onConflict(['route_id', 'position'])
      .ignore();

    const layoutsInserted = await insertIgnoringExisting(
      transaction('seat_layouts')
        .insert(
          demoLayouts.map((layout) => ({
            code: layout.code,
            name: layout.name,
            row_count: layout.rowCount,
            seats_per_row: layout.seatsPerRow,
            seat_count: layout.rowCount * layout.seatsPerRow,
          })),
        )
        .onConflict('code')
        .ignore()
        .returning('id'),
    );
    const layoutIds = await idsByCode(
      transaction,
      'seat_layouts',
      demoLayouts.map((layout) => layout.code),
    );
    await transaction('seats')
      .insert(
        demoLayouts.flatMap((layout) =>
          Array.from({ length: layout.rowCount }, (_, rowIndex) =>
            SEAT_LETTERS.slice(0, layout.seatsPerRow).map((letter) => ({
              layout_id: layoutIds.get(layout.code),
              seat_number: `${rowIndex + 1}${letter}`,
              row_number: rowIndex + 1,
              fare_class: rowIndex < layout.premiumRowCount ? 'PREMIUM' : 'STANDARD',
            })),
          ).flat(),
        ),
      )
      .onConflict(['layout_id', 'seat_number'])
      .ignore();

    const timetable = demoRoutes.map((route) => ({
      route_code: route.code,
      layout_code: route.layoutCode,
      departure_times: route.departureTimes,
    }));
    const tripsResult = await transaction.raw<{ rowCount: number }>(
      `INSERT INTO trips (route_id, layout_id, departure_time, arrival_time)
       SELECT route.id, layout.id, departure.instant,
              departure.instant + make_interval(mins => route.typical_duration_minutes)
         FROM json_to_recordset(CAST(? AS json)) AS plan(route_code text, layout_code text, departure_times text[])
         JOIN routes route ON route.code = plan.route_code
         JOIN stops origin ON origin.code = route.origin_stop_code
         JOIN seat_layouts layout ON layout.code = plan.layout_code
        CROSS JOIN generate_series(0, CAST(? AS integer) - 1) AS day_offset
        CROSS JOIN unnest(plan.departure_times) AS departure_clock
        CROSS JOIN LATERAL (
              SELECT ((CAST(? AS date) + day_offset) + CAST(departure_clock AS time)) AT TIME ZONE origin.time_zone
                     AS instant
            ) AS departure
       ON CONFLICT (route_id, departure_time) DO NOTHING`,
      [JSON.stringify(timetable), days, firstDay],
    );

    const fares = demoRoutes.flatMap((route) => [
      {
        route_code: route.code,
        fare_class: 'STANDARD',
        amount_minor: route.standardFareMinor,
        currency: route.currency,
      },
      {
        route_code: route.code,
        fare_class: 'PREMIUM',
        amount_minor: premiumFareMinor(route.standardFareMinor),
        currency: route.currency,
      },
    ]);
    const faresResult = await transaction.raw<{ rowCount: number }>(
      `INSERT INTO trip_fares (trip_id, fare_class, amount_minor, currency)
       SELECT trip.id, fare.fare_class, fare.amount_minor, fare.currency
         FROM json_to_recordset(CAST(? AS json)) AS fare(route_code text, fare_class text, amount_minor bigint, currency text)
         JOIN routes route ON route.code = fare.route_code
         JOIN trips trip ON trip.route_id = route.id
       ON CONFLICT (trip_id, fare_class) DO NOTHING`,
      [JSON.stringify(fares)],
    );

    const usersInserted =
      newUsers.length === 0
        ? 0
        : await insertIgnoringExisting(
            transaction('users').insert(newUsers).onConflict('email_lookup').ignore().returning('id'),
          );

    return {
      stopsInserted,
      routesInserted,
      layoutsInserted,
      tripsInserted: tripsResult.rowCount,
      faresInserted: faresResult.rowCount,
      usersInserted,
    };
  });
}

/** Argon2 is slow on purpose, so only accounts that do not exist yet are hashed, before the transaction opens. */
async function prepareMissingUsers(database: Knex, cipher: FieldCipher, accounts: readonly DemoUser[]) {
  const lookups = accounts.map((user) => emailLookup(cipher, user.email));
  const existing = new Set(
    (await database('users').whereIn('email_lookup', lookups).select('email_lookup')).map(
      (row: { email_lookup: string }) => row.email_lookup,
    ),
  );
  const missing = accounts.filter((_, index) => !existing.has(lookups[index]));
  return Promise.all(
    missing.map(async (user) => ({
      email: cipher.encrypt(user.email),
      email_lookup: emailLookup(cipher, user.email),
      password_hash: await hash(user.password),
      display_name: cipher.encrypt(user.displayName),
      phone: cipher.encryptOptional(user.phone),
      roles: [user.role],
    })),
  );
}

/** `query` is an insert that returns its inserted rows, so their count is what it added. */
async function insertIgnoringExisting(query: PromiseLike<unknown[]>): Promise<number> {
  const insertedRows = await query;
  return insertedRows.length;
}

async function idsByCode(
  transaction: Knex.Transaction,
  table: 'routes' | 'seat_layouts',
  codes: readonly string[],
): Promise<Map<string, string>> {
  const rows: { id: string; code: string }[] = await transaction(table)
    .whereIn('code', codes)
    .select('id', 'code');
  return new Map(rows.map((row) => [row.code, row.id]));
}

function calendarDate(day: string | Date): string {
  if (day instanceof Date) {
    if (Number.isNaN(day.getTime())) throw new RangeError('today is an invalid Date');
    return day.toISOString().slice(0, 10);
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) {
    throw new RangeError(`today must be a calendar date like 2026-12-01, got "${day}"`);
  }
  return day;
}
