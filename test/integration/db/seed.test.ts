// Demo seed against real PostgreSQL: idempotent, complete timetable, DST-correct departures, encrypted accounts.
import { expect } from '@jest/globals';
import { verify } from '@node-rs/argon2';
import type { Knex } from 'knex';
import {
  demoLayouts,
  demoRoutes,
  demoUsers,
  premiumFareMinor,
  seedDemoData,
  type SeedSummary,
} from '../../../dev/seed';
import { emailLookup } from '../../../src/db/user-email';
import { isolatedTestCipher, openTestDatabase } from '../../support/database';

// A window across the 2027 spring DST change (28 March), far from the dates other suites seed.
const FIRST_DAY = '2027-03-01';
const DAYS = 60;
const routeCodes = demoRoutes.map((route) => route.code);

// Keys of our own: the demo accounts this suite creates have blind indexes no other suite shares, so it can delete them.
const cipher = isolatedTestCipher('seedtest');
const demoLookups = demoUsers.map((user) => emailLookup(cipher, user.email));

let database: Knex;
let secondRun: SeedSummary;

async function departureAt(
  routeCode: string,
  localDate: string,
  localTime: string,
): Promise<Date | undefined> {
  const row = await database('trips as trip')
    .join('routes as route', 'route.id', 'trip.route_id')
    .join('stops as origin', 'origin.code', 'route.origin_stop_code')
    .where('route.code', routeCode)
    .whereRaw(`to_char(trip.departure_time AT TIME ZONE origin.time_zone, 'YYYY-MM-DD HH24:MI') = ?`, [
      `${localDate} ${localTime}`,
    ])
    .first<{ departure_time: Date } | undefined>('trip.departure_time');
  return row?.departure_time;
}

beforeAll(async () => {
  database = openTestDatabase({ poolSize: 4, applicationName: 'seed-tests' });
  await seedDemoData(database, { cipher, today: FIRST_DAY, days: DAYS });
  secondRun = await seedDemoData(database, { cipher, today: FIRST_DAY, days: DAYS });
});

afterAll(async () => {
  if (!database) return;
  // Stops, routes and trips are shared reference data other suites may be reading; only our accounts go.
  await database('users').whereIn('email_lookup', demoLookups).delete();
  await database.destroy();
});

describe('seedDemoData', () => {
  it('inserts nothing the second time', () => {
    expect(secondRun).toEqual({
      stopsInserted: 0,
      routesInserted: 0,
      layoutsInserted: 0,
      tripsInserted: 0,
      faresInserted: 0,
      usersInserted: 0,
    });
  });

  it('creates at least 20 routes between stops with valid IANA time zones and intermediate stops', async () => {
    expect(demoRoutes.length).toBeGreaterThanOrEqual(20);
    const routes = await database('routes').whereIn('code', routeCodes).select('id', 'code');
    expect(routes).toHaveLength(demoRoutes.length);

    const unknownZones = await database('stops')
      .whereIn('code', database('routes').whereIn('code', routeCodes).select('origin_stop_code'))
      .whereRaw('time_zone NOT IN (SELECT name FROM pg_timezone_names)')
      .pluck('code');
    expect(unknownZones).toEqual([]);

    const lisbonPortoStops = await database('route_stops')
      .join('routes', 'routes.id', 'route_stops.route_id')
      .where('routes.code', 'LIS-POR')
      .orderBy('position')
      .pluck('stop_code');
    expect(lisbonPortoStops).toEqual(['COI']);
  });

  it('schedules every route on each of the 60 days with its timetable', async () => {
    const perDay: { code: string; local_date: string; departures: number }[] = await database('trips as trip')
      .join('routes as route', 'route.id', 'trip.route_id')
      .join('stops as origin', 'origin.code', 'route.origin_stop_code')
      .whereIn('route.code', routeCodes)
      .whereRaw(
        `(trip.departure_time AT TIME ZONE origin.time_zone)::date BETWEEN CAST(? AS date) AND CAST(? AS date) + CAST(? AS integer)`,
        [FIRST_DAY, FIRST_DAY, DAYS - 1],
      )
      .groupBy('route.code', database.raw('(trip.departure_time AT TIME ZONE origin.time_zone)::date'))
      .select(
        'route.code',
        database.raw(`(trip.departure_time AT TIME ZONE origin.time_zone)::date AS local_date`),
        database.raw('count(*)::int AS departures'),
      );

    expect(perDay).toHaveLength(demoRoutes.length * DAYS);
    for (const route of demoRoutes) {
      const days = perDay.filter((row) => row.code === route.code);
      expect(days).toHaveLength(DAYS);
      expect(days.every((row) => row.departures === route.departureTimes.length)).toBe(true);
    }
    expect(perDay.some((row) => row.local_date === FIRST_DAY)).toBe(true);
  });

  it('gives seat layouts of 40 to 56 seats, premium seats in the front rows', async () => {
    const layouts = await database('seat_layouts')
      .whereIn(
        'code',
        demoLayouts.map((layout) => layout.code),
      )
      .select<{ id: string; row_count: number; seats_per_row: number; seat_count: number }[]>(
        'id',
        'row_count',
        'seats_per_row',
        'seat_count',
      );
    expect(layouts).toHaveLength(demoLayouts.length);
    for (const layout of layouts) {
      expect(layout.seat_count).toBeGreaterThanOrEqual(40);
      expect(layout.seat_count).toBeLessThanOrEqual(56);
      expect(layout.row_count * layout.seats_per_row).toBe(layout.seat_count);
      const seats = await database('seats')
        .where({ layout_id: layout.id })
        .select<{ row_number: number; fare_class: string }[]>('row_number', 'fare_class');
      expect(seats).toHaveLength(layout.seat_count);
      const premiumRows = seats
        .filter((seat) => seat.fare_class === 'PREMIUM')
        .map((seat) => seat.row_number);
      const standardRows = seats
        .filter((seat) => seat.fare_class === 'STANDARD')
        .map((seat) => seat.row_number);
      expect(premiumRows.length).toBeGreaterThan(0);
      expect(Math.max(...premiumRows)).toBeLessThan(Math.min(...standardRows));
    }
  });

  it('prices both fare classes on every trip in the route currency', async () => {
    const fares: { code: string; fare_class: string; amount_minor: number; currency: string }[] =
      await database('trip_fares as fare')
        .join('trips as trip', 'trip.id', 'fare.trip_id')
        .join('routes as route', 'route.id', 'trip.route_id')
        .whereIn('route.code', routeCodes)
        .distinct('route.code', 'fare.fare_class', 'fare.amount_minor', 'fare.currency');
    for (const route of demoRoutes) {
      expect(fares.filter((fare) => fare.code === route.code)).toEqual(
        expect.arrayContaining([
          {
            code: route.code,
            fare_class: 'STANDARD',
            amount_minor: route.standardFareMinor,
            currency: route.currency,
          },
          {
            code: route.code,
            fare_class: 'PREMIUM',
            amount_minor: premiumFareMinor(route.standardFareMinor),
            currency: route.currency,
          },
        ]),
      );
    }
    const unpriced = await database('trips as trip')
      .join('routes as route', 'route.id', 'trip.route_id')
      .whereIn('route.code', routeCodes)
      .whereRaw('(SELECT count(*) FROM trip_fares fare WHERE fare.trip_id = trip.id) <> 2')
      .count({ trips: '*' })
      .first();
    expect(Number(unpriced?.trips)).toBe(0);
  });

  it('stores a Lisbon 08:00 departure as the right instant on both sides of the DST change', async () => {
    // Lisbon is UTC+0 (WET) until 28 March 2027 and UTC+1 (WEST) after.
    expect(await departureAt('LIS-POR', '2027-03-15', '08:00')).toEqual(new Date('2027-03-15T08:00:00Z'));
    expect(await departureAt('LIS-POR', '2027-04-15', '08:00')).toEqual(new Date('2027-04-15T07:00:00Z'));
    // Madrid is UTC+1 / UTC+2, London UTC+0 / UTC+1.
    expect(await departureAt('MAD-BCN', '2027-03-15', '07:30')).toEqual(new Date('2027-03-15T06:30:00Z'));
    expect(await departureAt('MAD-BCN', '2027-04-15', '07:30')).toEqual(new Date('2027-04-15T05:30:00Z'));
    expect(await departureAt('LON-MAN', '2027-04-15', '08:00')).toEqual(new Date('2027-04-15T07:00:00Z'));

    const lisbonPorto = await database('trips')
      .join('routes', 'routes.id', 'trips.route_id')
      .where('routes.code', 'LIS-POR')
      .where('trips.departure_time', new Date('2027-03-15T08:00:00Z'))
      .first<{ departure_time: Date; arrival_time: Date; status: string } | undefined>(
        'trips.departure_time',
        'trips.arrival_time',
        'trips.status',
      );
    if (lisbonPorto === undefined) throw new Error('no LIS-POR trip at 2027-03-15T08:00Z');
    expect(lisbonPorto.arrival_time.getTime() - lisbonPorto.departure_time.getTime()).toBe(210 * 60_000);
    expect(lisbonPorto.status).toBe('SCHEDULED');
  });

  it('creates one account per role with encrypted personal data and argon2id password hashes', async () => {
    const users = await database('users').whereIn('email_lookup', demoLookups).select<
      {
        email: string;
        email_lookup: string;
        display_name: string;
        phone: string | null;
        password_hash: string;
        roles: string[];
      }[]
    >();
    expect(users).toHaveLength(demoUsers.length);
    expect(users.flatMap((user) => user.roles).sort()).toEqual([
      'admin',
      'agent',
      'customer',
      'customer',
      'driver',
    ]);

    for (const demoUser of demoUsers) {
      const stored = users.find((user) => user.email_lookup === emailLookup(cipher, demoUser.email))!;
      expect(stored.email).toMatch(/^enc:v1:seedtest:/);
      expect(stored.email).not.toContain(demoUser.email.split('@')[0]);
      expect(stored.display_name).toMatch(/^enc:v1:seedtest:/);
      expect(cipher.decrypt(stored.email)).toBe(demoUser.email);
      expect(cipher.decrypt(stored.display_name)).toBe(demoUser.displayName);
      expect(cipher.decryptOptional(stored.phone)).toBe(demoUser.phone);
      expect(stored.password_hash).toMatch(/^\$argon2id\$/);
      await expect(verify(stored.password_hash, demoUser.password)).resolves.toBe(true);
    }
  });

  it('tops the timetable up when run on a later day', async () => {
    const nextDay = '2027-03-02';
    const topUp = await seedDemoData(database, { cipher, today: nextDay, days: DAYS });
    const departuresPerDay = demoRoutes.reduce((sum, route) => sum + route.departureTimes.length, 0);
    expect(topUp.tripsInserted).toBe(departuresPerDay);
    expect(topUp.faresInserted).toBe(2 * departuresPerDay);
    expect(topUp.usersInserted).toBe(0);
    expect(await departureAt('LIS-POR', '2027-04-30', '08:00')).toEqual(new Date('2027-04-30T07:00:00Z'));
  });
});
