// Shared parts of the k6 load scenarios: settings from the environment, the load-test account pool, free seats.
/* global __ENV */
import http from 'k6/http';
import { fail } from 'k6';

export const baseUrl = (__ENV.BASE_URL || 'http://localhost:8080').replace(/\/$/, '');
export const vus = Number(__ENV.VUS || 10);
export const duration = __ENV.DURATION || '60s';
/** The seed's load-test accounts: loadtest-001@example.com … loadtest-100@example.com (development and test only). */
export const accountCount = Number(__ENV.LOAD_TEST_ACCOUNTS || 100);
export const password = __ENV.LOAD_TEST_PASSWORD || 'loadtest-password';

export function accountEmail(index) {
  return `loadtest-${String((index % accountCount) + 1).padStart(3, '0')}@example.com`;
}

/** The usual thresholds: the scenario fails when its p95 latency or its error rate goes past them. */
export function thresholds(metric, p95Milliseconds) {
  const p95 = Number(__ENV.P95_MS || p95Milliseconds);
  return {
    [metric]: [`p(95)<${p95}`],
    checks: [`rate>${1 - Number(__ENV.MAX_ERROR_RATE || 0.01)}`],
  };
}

/** A closed loop: `vus` users, each sending its next request as soon as the last is answered. */
export function constantLoad() {
  return { executor: 'constant-vus', vus, duration, gracefulStop: '30s' };
}

/**
 * The booking scenarios' open model: `RATE` new customers a second (3, about half of what one dev-server stack on
 * two cores completes), arriving whether or not earlier ones were answered, as customers do. A closed loop of
 * back-to-back bookings asks for as many as the stack can make, so its latency says how long the queue grew rather
 * than how a load the stack should carry is served; and it slows down with the stack, hiding the wait a slow answer
 * causes. Arrivals it cannot start for want of users are dropped and counted.
 */
export function bookingArrivals() {
  const rate = Number(__ENV.RATE || 3);
  const readyUsers = Math.max(vus, Math.ceil(rate));
  return {
    executor: 'constant-arrival-rate',
    rate,
    timeUnit: '1s',
    duration,
    preAllocatedVUs: readyUsers,
    maxVUs: readyUsers * 5,
    gracefulStop: '30s',
  };
}

/** Every arrival was served: none dropped because all the users were still waiting for answers. */
export const everyArrivalServed = { dropped_iterations: ['count<1'] };

export function uuid() {
  // Random enough for idempotency keys and request ids; k6 has no crypto.randomUUID before its web crypto module.
  return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (character) => {
    const random = (Math.random() * 16) | 0;
    return (character === 'x' ? random : (random & 0x3) | 0x8).toString(16);
  });
}

export function login(email) {
  const response = http.post(`${baseUrl}/api/auth/login`, JSON.stringify({ email, password }), {
    headers: { 'content-type': 'application/json' },
    tags: { name: 'setup login' },
  });
  if (response.status !== 200) {
    fail(
      `login of ${email} answered ${response.status}: ${response.body}. Is the stack seeded in development or test ` +
        '(npm start), and its rate limits off (RATE_LIMIT_PER_IP=0 RATE_LIMIT_PER_USER=0)?',
    );
  }
  return response.json('access_token');
}

/** One access token per load-test account, signed in once in setup(). */
export function signInPool() {
  const tokens = [];
  for (let index = 0; index < accountCount; index += 1)
    tokens.push({ email: accountEmail(index), token: login(accountEmail(index)) });
  return tokens;
}

function isoDate(daysFromToday) {
  return new Date(Date.now() + daysFromToday * 86400000).toISOString().slice(0, 10);
}

/**
 * Free seats on the coming days' trips, read from the catalogue, until `wanted` are found: every iteration of a
 * booking scenario takes the next one, so no two iterations compete for a seat.
 */
export function findFreeSeats(token, wanted) {
  const headers = { authorization: `Bearer ${token}` };
  const routes = http
    .get(`${baseUrl}/api/routes?page_size=100`, { headers, tags: { name: 'setup routes' } })
    .json('routes');
  const seats = [];
  for (let day = 1; day <= 60 && seats.length < wanted; day += 1) {
    for (const route of routes) {
      const response = http.get(`${baseUrl}/api/routes/${route.id}/availability?date=${isoDate(day)}`, {
        headers,
        tags: { name: 'setup availability' },
      });
      if (response.status !== 200) fail(`availability answered ${response.status}: ${response.body}`);
      for (const trip of response.json('trips')) {
        for (const seat of trip.seat_map) {
          if (seat.status === 'FREE')
            seats.push({ tripId: trip.trip_id, seatNumber: seat.seat_number, fareClass: seat.fare_class });
        }
      }
      if (seats.length >= wanted) break;
    }
  }
  if (seats.length === 0) fail('no free seat in the next 60 days');
  return seats.slice(0, wanted);
}

/** The seat of this iteration; running out is a failed run, never a double booking. */
export function seatFor(seats, iteration) {
  if (iteration >= seats.length)
    fail(`ran out of free seats after ${seats.length} bookings; set SEATS higher`);
  return seats[iteration];
}
