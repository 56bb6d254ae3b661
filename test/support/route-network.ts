// A small route network of the suite's own (unique stop and route codes), so searches see only what it made.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { FieldCipher } from '../../src/security/field-encryption';

export interface NetworkFixture {
  suffix: string;
  stops: { origin: string; destination: string; other: string };
  cities: { origin: string; destination: string; other: string };
  routes: {
    main: { id: string; code: string };
    branch: { id: string; code: string };
    idle: { id: string; code: string };
  };
  /** Trips of the main route: two on `date`, one on `nextDate`, and one just after midnight local on `date`. */
  trips: { morning: string; evening: string; nextDay: string; afterMidnight: string; branch: string };
  date: string;
  nextDate: string;
  /** Seat 1A (premium) of the morning trip is held, 3A (standard) booked. */
  heldSeat: string;
  bookedSeat: string;
  remove(): Promise<void>;
}

/** Letters only, so codes match the contract's patterns (`^[A-Z0-9]{2,12}$`). */
function randomLetters(count: number): string {
  const letters = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
  return [...randomBytes(count)].map((byte) => letters[byte % letters.length]).join('');
}

export async function createNetworkFixture(
  database: Knex,
  options: { cipher: FieldCipher; customerId: string; date: string; nextDate: string },
): Promise<NetworkFixture> {
  const suffix = randomLetters(5);
  const stops = { origin: `O${suffix}`, destination: `D${suffix}`, other: `X${suffix}` };
  const cities = {
    origin: `Origin City ${suffix}`,
    destination: `Destination City ${suffix}`,
    other: `Other City ${suffix}`,
  };
  await database('stops').insert([
    {
      code: stops.origin,
      name: `Origin ${suffix}`,
      city: cities.origin,
      country_code: 'ES',
      time_zone: 'Europe/Madrid',
    },
    {
      code: stops.destination,
      name: `Destination ${suffix}`,
      city: cities.destination,
      country_code: 'PT',
      time_zone: 'Europe/Lisbon',
    },
    {
      code: stops.other,
      name: `Other ${suffix}`,
      city: cities.other,
      country_code: 'FR',
      time_zone: 'Europe/Paris',
    },
  ]);
  const routeRow = (code: string, origin: string, destination: string) => ({
    id: randomUUID(),
    code,
    origin_stop_code: origin,
    destination_stop_code: destination,
    operator_name: `Rest Test Lines ${suffix}`,
    distance_km: 500,
    typical_duration_minutes: 300,
  });
  const main = routeRow(`${stops.origin}-${stops.destination}`, stops.origin, stops.destination);
  const branch = routeRow(`${stops.origin}-${stops.other}`, stops.origin, stops.other);
  const idle = routeRow(`${stops.other}-${stops.destination}`, stops.other, stops.destination);
  await database('routes').insert([main, branch, idle]);
  await database('route_stops').insert({
    route_id: main.id,
    position: 1,
    stop_code: stops.other,
    minutes_from_origin: 120,
  });

  /** A bus layout of `rows` rows of these seat letters; returns its id. */
  const insertLayout = async (layout: {
    code: string;
    name: string;
    rows: number;
    letters: string[];
    fareClassOfRow: (row: number) => 'PREMIUM' | 'STANDARD';
  }) => {
    const id = randomUUID();
    const rowNumbers = Array.from({ length: layout.rows }, (_, index) => index + 1);
    await database('seat_layouts').insert({
      id,
      code: layout.code,
      name: layout.name,
      row_count: layout.rows,
      seats_per_row: layout.letters.length,
      seat_count: layout.rows * layout.letters.length,
    });
    await database('seats').insert(
      rowNumbers.flatMap((row) =>
        layout.letters.map((letter) => ({
          layout_id: id,
          seat_number: `${row}${letter}`,
          row_number: row,
          fare_class: layout.fareClassOfRow(row),
        })),
      ),
    );
    return id;
  };
  const layoutId = await insertLayout({
    code: `REST-${suffix}`,
    name: 'Rest test coach',
    rows: 3,
    letters: ['A', 'B'],
    fareClassOfRow: (row) => (row === 1 ? 'PREMIUM' : 'STANDARD'),
  });
  // The evening runs a smaller coach: a day's trips on two layouts, each trip shown with its own bus's seats.
  const minibusLayoutId = await insertLayout({
    code: `REST-MINI-${suffix}`,
    name: 'Rest test minibus',
    rows: 2,
    letters: ['C', 'D'],
    fareClassOfRow: () => 'STANDARD',
  });

  // Local wall-clock times in Madrid (UTC+1 in winter): 00:30 local is 23:30 UTC of the day before.
  const instant = (date: string, localTime: string) => `${date}T${localTime}:00+01:00`;
  const tripRow = (routeId: string, departure: string, tripLayoutId = layoutId) => ({
    id: randomUUID(),
    route_id: routeId,
    layout_id: tripLayoutId,
    departure_time: departure,
    arrival_time: new Date(Date.parse(departure) + 300 * 60_000).toISOString(),
  });
  const trips = {
    morning: tripRow(main.id, instant(options.date, '08:30')),
    evening: tripRow(main.id, instant(options.date, '17:00'), minibusLayoutId),
    nextDay: tripRow(main.id, instant(options.nextDate, '08:30')),
    afterMidnight: tripRow(main.id, instant(options.date, '00:30')),
    branch: tripRow(branch.id, instant(options.date, '09:00')),
  };
  await database('trips').insert(Object.values(trips));
  await database('trip_fares').insert(
    Object.values(trips).flatMap((trip) => [
      { trip_id: trip.id, fare_class: 'STANDARD', amount_minor: 2450, currency: 'EUR' },
      { trip_id: trip.id, fare_class: 'PREMIUM', amount_minor: 3900, currency: 'EUR' },
    ]),
  );

  const bookingId = randomUUID();
  await database('bookings').insert({
    id: bookingId,
    customer_id: options.customerId,
    trip_id: trips.morning.id,
    route_id: main.id,
    status: 'PENDING_PAYMENT',
    contact_email: options.cipher.encrypt('fixture@example.com'),
    currency: 'EUR',
    departure_time: trips.morning.departure_time,
  });
  const holdExpiresAt = new Date(Date.now() + 3600_000).toISOString();
  await database('seat_allocations').insert([
    {
      trip_id: trips.morning.id,
      seat_number: '1A',
      booking_id: bookingId,
      state: 'HELD',
      hold_expires_at: holdExpiresAt,
    },
    {
      trip_id: trips.morning.id,
      seat_number: '3A',
      booking_id: bookingId,
      state: 'BOOKED',
      hold_expires_at: null,
    },
  ]);

  const routeIds = [main.id, branch.id, idle.id];
  return {
    suffix,
    stops,
    cities,
    routes: {
      main: { id: main.id, code: main.code },
      branch: { id: branch.id, code: branch.code },
      idle: { id: idle.id, code: idle.code },
    },
    trips: {
      morning: trips.morning.id,
      evening: trips.evening.id,
      nextDay: trips.nextDay.id,
      afterMidnight: trips.afterMidnight.id,
      branch: trips.branch.id,
    },
    date: options.date,
    nextDate: options.nextDate,
    heldSeat: '1A',
    bookedSeat: '3A',
    async remove() {
      await database('bookings').where('id', bookingId).delete();
      await database('trips').whereIn('route_id', routeIds).delete();
      await database('routes').whereIn('id', routeIds).delete();
      await database('seat_layouts').whereIn('id', [layoutId, minibusLayoutId]).delete();
      await database('stops').whereIn('code', Object.values(stops)).delete();
    },
  };
}
