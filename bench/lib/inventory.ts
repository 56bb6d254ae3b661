// The bench's seat inventory, inserted in bulk with SQL: bench routes, a 50-seat bus, thousands of trips, a fifth
// of every bus already booked; and the supply of free seats the create scenarios book one by one.
import type { Knex } from 'knex';
import type { FieldCipher } from '../../src/security/field-encryption';

const routeCount = 20;
const departuresPerDay = ['06:00', '10:00', '14:00', '18:00'];
const timeZone = 'Europe/Lisbon';
const layoutCode = 'BENCH-50';
const seatLetters = ['A', 'B', 'C', 'D', 'E'];
const rowCount = 10;
/** Rows 1-2 are premium and already booked on every trip; creates take the standard seats of rows 3-10. */
const bookedRows = 2;
/** Trips depart from this many days ahead, so no hold or change cutoff reaches a departure during a run. */
const firstDayOffset = 2;

export const benchInventoryEmail = 'bench-inventory@example.com';

export interface Inventory {
  trips: number;
  seatsPerTrip: number;
  bookedSeatsPerTrip: number;
  /** Route and local date pairs whose availability lists four trips each, and each route's one inner leg. */
  availabilityTargets: {
    routeId: string;
    date: string;
    innerSegment: { boarding: string; alighting: string };
  }[];
  /** Trip ids in departure order, for the seat supply. */
  tripIds: string[];
}

function localDate(daysFromToday: number): string {
  return new Date(Date.now() + daysFromToday * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Inserts `trips` trips (rounded to whole days of 20 routes × 4 departures) of a 50-seat layout, their fares,
 * and one confirmed booking per trip holding its 10 premium seats, then analyses the tables.
 */
export async function seedInventory(database: Knex, cipher: FieldCipher, trips: number): Promise<Inventory> {
  const days = Math.max(1, Math.round(trips / (routeCount * departuresPerDay.length)));
  const firstDay = localDate(firstDayOffset);
  await database.transaction(async (transaction) => {
    await transaction('stops')
      .insert(
        Array.from({ length: routeCount }, (_, index) => ({
          code: `BENCH${String(index + 1).padStart(2, '0')}`,
          name: `Bench stop ${index + 1}`,
          city: `Benchville ${index + 1}`,
          country_code: 'PT',
          time_zone: timeZone,
        })),
      )
      .onConflict('code')
      .ignore();
    await transaction('routes')
      .insert(
        Array.from({ length: routeCount }, (_, index) => ({
          code: `BENCH-${String(index + 1).padStart(2, '0')}`,
          origin_stop_code: `BENCH${String(index + 1).padStart(2, '0')}`,
          destination_stop_code: `BENCH${String(((index + 1) % routeCount) + 1).padStart(2, '0')}`,
          operator_name: 'Bench Coaches',
          distance_km: 300,
          typical_duration_minutes: 180,
        })),
      )
      .onConflict('code')
      .ignore();
    // Four stops per route, as the catalogue's: two calls between the ends, so availability reads segments' legs.
    await transaction.raw(
      `INSERT INTO route_stops (route_id, position, stop_code, minutes_from_origin)
       SELECT route.id, call.position, 'BENCH' || lpad(((route.number + call.position + 1) % ? + 1)::text, 2, '0'),
              call.minutes
         FROM (SELECT id, substring(code FROM 7)::integer - 1 AS number FROM routes WHERE code LIKE 'BENCH-%')
              AS route
        CROSS JOIN (VALUES (1, 60), (2, 120)) AS call (position, minutes)
       ON CONFLICT DO NOTHING`,
      [routeCount],
    );
    const [layout] = await transaction('seat_layouts')
      .insert({
        code: layoutCode,
        name: 'Bench coach, 50 seats',
        row_count: rowCount,
        seats_per_row: seatLetters.length,
        seat_count: rowCount * seatLetters.length,
      })
      .returning<{ id: string }[]>('id');
    await transaction('seats').insert(
      Array.from({ length: rowCount }, (_, rowIndex) =>
        seatLetters.map((letter) => ({
          layout_id: layout.id,
          seat_number: `${rowIndex + 1}${letter}`,
          row_number: rowIndex + 1,
          fare_class: rowIndex < bookedRows ? 'PREMIUM' : 'STANDARD',
        })),
      ).flat(),
    );
    await transaction.raw(
      `INSERT INTO trips (route_id, layout_id, departure_time, arrival_time)
       SELECT route.id, ?, departure.instant, departure.instant + interval '180 minutes'
         FROM routes route
        CROSS JOIN generate_series(0, CAST(? AS integer) - 1) AS day_offset
        CROSS JOIN unnest(CAST(? AS text[])) AS clock
        CROSS JOIN LATERAL (
              SELECT ((CAST(? AS date) + day_offset) + CAST(clock AS time)) AT TIME ZONE ? AS instant
            ) AS departure
        WHERE route.code LIKE 'BENCH-%'`,
      // An array binding would be spread into a list by knex: the array goes as a PostgreSQL array literal.
      [layout.id, days, `{${departuresPerDay.join(',')}}`, firstDay, timeZone],
    );
    await transaction.raw(
      `INSERT INTO trip_fares (trip_id, fare_class, amount_minor, currency)
       SELECT trip.id, fare.fare_class, fare.amount_minor, 'EUR'
         FROM trips trip
        CROSS JOIN (VALUES ('STANDARD', 2500), ('PREMIUM', 3500)) AS fare(fare_class, amount_minor)
        WHERE trip.layout_id = ?`,
      [layout.id],
    );
    const [owner] = await transaction('users')
      .insert({
        email: cipher.encrypt(benchInventoryEmail),
        email_lookup: cipher.blindIndex(`bench:${benchInventoryEmail}`),
        password_hash: 'none: this account never signs in',
        display_name: cipher.encrypt('Bench inventory'),
        roles: ['customer'],
      })
      .returning<{ id: string }[]>('id');
    // One envelope for every row: a valid ciphertext the read model can decrypt, made once instead of 20,000 times.
    const contactEmail = cipher.encrypt(benchInventoryEmail);
    await transaction.raw(
      `INSERT INTO bookings (customer_id, trip_id, route_id, status, contact_email, currency, price_total_minor,
                             amount_paid_minor, payment_status, hold_expires_at, departure_time)
       SELECT ?, trip.id, trip.route_id, 'CONFIRMED', ?, 'EUR', ?, ?, 'CAPTURED', NULL, trip.departure_time
         FROM trips trip WHERE trip.layout_id = ?`,
      [owner.id, contactEmail, 3500 * bookedRows * 5, 3500 * bookedRows * 5, layout.id],
    );
    await transaction.raw(
      `INSERT INTO seat_allocations (trip_id, layout_id, seat_number, booking_id, state)
       SELECT booking.trip_id, seat.layout_id, seat.seat_number, booking.id, 'BOOKED'
         FROM bookings booking
         JOIN seats seat ON seat.layout_id = ? AND seat.row_number <= ?
        WHERE booking.customer_id = ?`,
      [layout.id, bookedRows, owner.id],
    );
  });
  for (const table of ['trips', 'trip_fares', 'bookings', 'seat_allocations', 'seats', 'routes', 'stops']) {
    await database.raw(`ANALYZE ${table}`);
  }

  const routes = await database('routes as route')
    .where('route.code', 'like', 'BENCH-%')
    .orderBy('route.code')
    .select<{ id: string; calls: string[] }[]>(
      'route.id',
      database.raw(
        'array(SELECT stop_code FROM route_stops WHERE route_id = route.id ORDER BY position) AS calls',
      ),
    );
  const availabilityTargets = Array.from({ length: days }, (_, day) =>
    localDate(firstDayOffset + day),
  ).flatMap((date) =>
    routes.map((route) => ({
      routeId: route.id,
      date,
      innerSegment: { boarding: route.calls[0], alighting: route.calls[1] },
    })),
  );
  const tripIds = (
    await database('trips as trip')
      .join('seat_layouts as layout', 'layout.id', 'trip.layout_id')
      .where('layout.code', layoutCode)
      .orderBy([{ column: 'trip.departure_time' }, { column: 'trip.id' }])
      .select<{ id: string }[]>('trip.id')
  ).map((row) => row.id);
  return {
    trips: tripIds.length,
    seatsPerTrip: rowCount * seatLetters.length,
    bookedSeatsPerTrip: bookedRows * seatLetters.length,
    availabilityTargets,
    tripIds,
  };
}

export interface FreeSeat {
  tripId: string;
  seatNumber: string;
  fareClass: 'STANDARD';
}

/** Hands out each free standard seat once, trip after trip, so no two creates of a run ever want the same seat. */
export class SeatSupply {
  private tripIndex = 0;
  private seatIndex = 0;
  private readonly freeSeatNumbers: string[];

  constructor(private readonly tripIds: readonly string[]) {
    this.freeSeatNumbers = [];
    for (let row = bookedRows + 1; row <= rowCount; row += 1) {
      for (const letter of seatLetters) this.freeSeatNumbers.push(`${row}${letter}`);
    }
  }

  next(): FreeSeat {
    if (this.seatIndex >= this.freeSeatNumbers.length) this.nextTrip();
    const seatNumber = this.freeSeatNumbers[this.seatIndex];
    this.seatIndex += 1;
    return { tripId: this.currentTrip(), seatNumber, fareClass: 'STANDARD' };
  }

  /** `count` free seats on one trip no create has touched yet. */
  seatsOnFreshTrip(count: number): FreeSeat[] {
    if (count > this.freeSeatNumbers.length)
      throw new RangeError(`a bench trip has ${this.freeSeatNumbers.length} free seats`);
    if (this.seatIndex > 0) this.nextTrip();
    return Array.from({ length: count }, () => this.next());
  }

  private nextTrip(): void {
    this.tripIndex += 1;
    this.seatIndex = 0;
  }

  private currentTrip(): string {
    const tripId = this.tripIds[this.tripIndex];
    if (tripId === undefined) {
      throw new Error(
        `the bench inventory ran out of free seats after ${this.tripIds.length} trips: seed more (--trips)`,
      );
    }
    return tripId;
  }
}
