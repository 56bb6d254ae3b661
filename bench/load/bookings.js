// k6: POST /api/bookings (then pay, so each load-test account stays under its open-hold cap) with the seed's
// load-test accounts, every iteration on a seat of its own.
/* global __ENV */
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import {
  baseUrl,
  bookingArrivals,
  everyArrivalServed,
  findFreeSeats,
  signInPool,
  thresholds,
  uuid,
} from './common.js';

export const options = {
  scenarios: { bookings: bookingArrivals() },
  thresholds: {
    ...everyArrivalServed,
    ...thresholds('http_req_duration{name:POST /api/bookings}', 1000),
    'http_req_duration{name:POST /api/bookings/{id}/payment}': [`p(95)<${Number(__ENV.P95_MS || 1000)}`],
    'http_req_failed{scenario:bookings}': [`rate<${Number(__ENV.MAX_ERROR_RATE || 0.01)}`],
  },
};

export function setup() {
  const accounts = signInPool();
  return { accounts, seats: findFreeSeats(accounts[0].token, Number(__ENV.SEATS || 4000)) };
}

export default function ({ accounts, seats }) {
  const iteration = exec.scenario.iterationInTest;
  if (iteration >= seats.length)
    exec.test.abort(`ran out of free seats after ${seats.length} bookings; set SEATS higher`);
  const seat = seats[iteration];
  // Account after account: no one account nears its open-hold cap or its rate limit.
  const account = accounts[iteration % accounts.length];
  const headers = { authorization: `Bearer ${account.token}`, 'content-type': 'application/json' };
  const created = http.post(
    `${baseUrl}/api/bookings`,
    JSON.stringify({
      trip_id: seat.tripId,
      passengers: [
        {
          first_name: 'Load',
          last_name: 'Test',
          email: account.email,
          seat_number: seat.seatNumber,
          fare_class: seat.fareClass,
        },
      ],
      contact_email: account.email,
    }),
    { headers: { ...headers, 'idempotency-key': uuid() }, tags: { name: 'POST /api/bookings' } },
  );
  const held = check(created, {
    'create answered 201 (or 202, still holding)': (response) =>
      response.status === 201 || response.status === 202,
  });
  if (!held || created.status !== 201) return;
  const paid = http.post(
    `${baseUrl}/api/bookings/${created.json('id')}/payment`,
    JSON.stringify({ payment_token: 'tok_visa' }),
    { headers: { ...headers, 'idempotency-key': uuid() }, tags: { name: 'POST /api/bookings/{id}/payment' } },
  );
  check(paid, {
    'payment confirmed the booking': (response) =>
      response.status === 200 && response.json('status') === 'CONFIRMED',
  });
}
