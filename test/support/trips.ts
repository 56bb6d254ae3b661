// The one trip builder of the tests: a trip on a route, stops and seat layout of its own, and requests to book it.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { FareClass } from '../../src/domain/booking';
import type { CreateBookingInput, PassengerInputData } from '../../src/domain/validation';

export const standardPriceMinor = 2500;
export const premiumPriceMinor = 4000;
export const currency = 'EUR';
const seatLetters = ['A', 'B', 'C', 'D', 'E', 'F'];
const seatsPerRow = 4;

export interface TestTrip {
  tripId: string;
  routeId: string;
  layoutId: string;
  departureTime: Date;
  /** The route's stops in travel order: the origin, any middle stops, the destination. */
  stopCodes: string[];
  /** Every seat of the bus, in order: `1A`, `1B`, ... */
  seatNumbers: string[];
  /** The seats of the first `premiumRows` rows. */
  premiumSeatNumbers: string[];
  /**
   * Deletes the trip with its route, layout and stops, and every booking on it with the payment simulator's
   * ledger rows; for tests whose bookings no workflow still works on.
   */
  remove(): Promise<void>;
}

export interface TripOptions {
  /** Seats on the bus, four per row (the last row may be shorter); 16 by default. */
  seatCount?: number;
  /** How many of the first rows are PREMIUM; the others are STANDARD. */
  premiumRows?: number;
  /** Milliseconds from now to departure; a week by default. */
  departureInMs?: number;
  /** Minutes from the origin to the destination; 210 by default. */
  durationMinutes?: number;
  /** Stops between the origin and the destination (Coimbra, then Aveiro), 70 minutes apart; none by default. */
  middleStops?: 0 | 1 | 2;
}

/** A trip on its own route, stops and layout, so test files never share seats. */
export async function createTrip(database: Knex, options: TripOptions = {}): Promise<TestTrip> {
  const seatCount = options.seatCount ?? 16;
  const premiumRows = options.premiumRows ?? 0;
  const suffix = randomBytes(4).toString('hex').toUpperCase();
  const middleCities = ['Coimbra', 'Aveiro'].slice(0, options.middleStops ?? 0);
  const stopCodes = [
    `SA${suffix}`,
    ...middleCities.map((_, index) => `S${index + 1}${suffix}`),
    `SB${suffix}`,
  ];
  const cities = ['Lisbon', ...middleCities, 'Porto'];
  await database('stops').insert(
    stopCodes.map((code, index) => ({
      code,
      name: `Test stop ${index + 1}`,
      city: cities[index],
      country_code: 'PT',
      time_zone: 'Europe/Lisbon',
    })),
  );
  const [{ id: routeId }] = await database('routes')
    .insert({
      code: `TEST-${suffix}`,
      origin_stop_code: stopCodes[0],
      destination_stop_code: stopCodes[stopCodes.length - 1],
      operator_name: 'Test lines',
      distance_km: 313,
      typical_duration_minutes: options.durationMinutes ?? 210,
    })
    .returning<{ id: string }[]>('id');
  if (middleCities.length > 0) {
    await database('route_stops').insert(
      middleCities.map((_, index) => ({
        route_id: routeId,
        position: index + 1,
        stop_code: stopCodes[index + 1],
        minutes_from_origin: 70 * (index + 1),
      })),
    );
  }
  const rowCount = Math.ceil(seatCount / seatsPerRow);
  const [{ id: layoutId }] = await database('seat_layouts')
    .insert({
      code: `TEST-${suffix}`,
      name: `Test layout of ${seatCount} seats`,
      row_count: rowCount,
      seats_per_row: seatsPerRow,
      seat_count: seatCount,
    })
    .returning<{ id: string }[]>('id');
  const seats = Array.from({ length: seatCount }, (_, index) => {
    const rowNumber = Math.floor(index / seatsPerRow) + 1;
    const fareClass: FareClass = rowNumber <= premiumRows ? 'PREMIUM' : 'STANDARD';
    return {
      layout_id: layoutId,
      seat_number: `${rowNumber}${seatLetters[index % seatsPerRow]}`,
      row_number: rowNumber,
      fare_class: fareClass,
    };
  });
  await database('seats').insert(seats);
  const departureTime = new Date(Date.now() + (options.departureInMs ?? 7 * 24 * 3_600_000));
  const [{ id: tripId }] = await database('trips')
    .insert({
      route_id: routeId,
      layout_id: layoutId,
      departure_time: departureTime,
      arrival_time: new Date(departureTime.getTime() + (options.durationMinutes ?? 210) * 60_000),
    })
    .returning<{ id: string }[]>('id');
  await database('trip_fares').insert([
    { trip_id: tripId, fare_class: 'STANDARD', amount_minor: standardPriceMinor, currency },
    { trip_id: tripId, fare_class: 'PREMIUM', amount_minor: premiumPriceMinor, currency },
  ]);
  return {
    tripId,
    routeId,
    layoutId,
    departureTime,
    stopCodes,
    seatNumbers: seats.map((seat) => seat.seat_number),
    premiumSeatNumbers: seats.filter((seat) => seat.fare_class === 'PREMIUM').map((seat) => seat.seat_number),
    async remove() {
      await removeBookings(
        database,
        await database('bookings').where({ trip_id: tripId }).pluck<string[]>('id'),
      );
      await database('routes').where({ id: routeId }).delete();
      await database('seat_layouts').where({ id: layoutId }).delete();
      await database('stops').whereIn('code', stopCodes).delete();
    },
  };
}

/** Deletes the bookings with the payment simulator's ledger rows; for bookings no workflow still works on. */
export async function removeBookings(database: Knex, bookingIds: readonly string[]): Promise<void> {
  for (const bookingId of bookingIds) {
    const keyPattern = `${bookingId}:%`;
    const chargeIds = database('payment_simulator.charges')
      .where('idempotency_key', 'like', keyPattern)
      .select('id');
    await database('payment_simulator.refunds').whereIn('charge_id', chargeIds).delete();
    await database('payment_simulator.charges').where('idempotency_key', 'like', keyPattern).delete();
    await database('payment_simulator.transient_failures')
      .where('idempotency_key', 'like', keyPattern)
      .delete();
  }
  await database('bookings').whereIn('id', bookingIds).delete();
}

export function passengerFor(
  seatNumber: string,
  fareClass: FareClass = 'STANDARD',
  overrides: Partial<PassengerInputData> = {},
): PassengerInputData {
  return {
    firstName: 'Ana',
    lastName: 'Silva',
    email: 'ana.silva@example.com',
    seatNumber,
    fareClass,
    ...overrides,
  };
}

/** A create request for `seatNumbers` (STANDARD unless listed in `premiumSeats`). */
export function bookingRequest(
  trip: Pick<TestTrip, 'tripId' | 'premiumSeatNumbers'>,
  seatNumbers: readonly string[],
  options: { contactPhone?: string } = {},
): CreateBookingInput {
  return {
    tripId: trip.tripId,
    passengers: seatNumbers.map((seatNumber, index) =>
      passengerFor(seatNumber, trip.premiumSeatNumbers.includes(seatNumber) ? 'PREMIUM' : 'STANDARD', {
        firstName: `Passenger${index + 1}`,
      }),
    ),
    contactEmail: 'contact@example.com',
    ...(options.contactPhone === undefined ? {} : { contactPhone: options.contactPhone }),
  };
}

/** The REST JSON body of a create for one STANDARD passenger on `seatNumber`, as a web or mobile app sends it. */
export function restBookingBody(trip: Pick<TestTrip, 'tripId'>, seatNumber: string) {
  const passenger = passengerFor(seatNumber);
  return {
    trip_id: trip.tripId,
    passengers: [
      {
        first_name: passenger.firstName,
        last_name: passenger.lastName,
        email: passenger.email,
        seat_number: passenger.seatNumber,
        fare_class: passenger.fareClass,
      },
    ],
    contact_email: passenger.email,
  };
}
