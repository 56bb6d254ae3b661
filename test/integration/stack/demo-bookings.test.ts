// `npm start`'s demo bookings over the API and real saga: seat maps differ by segment, and a second run books nothing.
import { randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import type { components } from '@bus-booking/client';
import {
  aliceDemoUser,
  DEMO_BOOKING_DAYS_AHEAD,
  demoBookings,
  demoUsers,
  seedDemoData,
} from '../../../dev/seed';
import { makeDemoBookings, type DemoBookingSummary } from '../../../dev/stack/demo-bookings';
import { emailLookup } from '../../../src/db/user-email';
import { composeTestApi, startServer, type RunningServer, type TestApi } from '../../support/rest-app';
import { fetchJson } from '../../support/responses';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { removeBookings } from '../../support/trips';

type Schemas = components['schemas'];

/** Ten creates and payments, each a workflow, on two shared cores. */
jest.setTimeout(180_000);

// Far from the dates other suites seed the demo network for.
const startDay = '2027-06-01';
const travelDay = '2027-06-08';

let saga: SagaEnvironment;
let api: TestApi;
let server: RunningServer;
let aliceId: string;
let token: string;
let firstRun: DemoBookingSummary;
let secondRun: DemoBookingSummary;
let bookingsAfterFirstRun: string[];

async function aliceBookingIds(): Promise<string[]> {
  return saga.database('bookings').where({ customer_id: aliceId }).orderBy('id').pluck<string[]>('id');
}

/** Seat `seatNumber`'s status on the route's trip leaving its origin at `originTime`, for one segment. */
async function seatStatus(
  routeCode: string,
  originTime: string,
  segment: { boarding: string; alighting: string },
  seatNumber: string,
): Promise<string | undefined> {
  const trip = await saga
    .database('trips as trip')
    .join('routes as route', 'route.id', 'trip.route_id')
    .join('stops as origin', 'origin.code', 'route.origin_stop_code')
    .where('route.code', routeCode)
    .whereRaw(`to_char(trip.departure_time AT TIME ZONE origin.time_zone, 'YYYY-MM-DD HH24:MI') = ?`, [
      `${travelDay} ${originTime}`,
    ])
    .first<{ id: string; route_id: string }>('trip.id', 'trip.route_id');
  const query = new URLSearchParams({
    date: travelDay,
    boarding_stop: segment.boarding,
    alighting_stop: segment.alighting,
  });
  const answer = await fetchJson<Schemas['RouteAvailability']>(
    server.baseUrl,
    'GET',
    `/v1/routes/${trip.route_id}/availability?${query.toString()}`,
    { token },
  );
  expect(answer.status).toBe(200);
  const tripAvailability = answer.body.trips.find((candidate) => candidate.trip_id === trip.id);
  return tripAvailability?.seat_map.find((entry) => entry.seat_number === seatNumber)?.status;
}

beforeAll(async () => {
  // A blind index of this file only: the demo accounts it seeds meet no other suite's and can go again. The
  // encryption keys stay the suites' own, so the ticket signing key other suites created decrypts here too.
  saga = await startSagaEnvironment({ environment: { BLIND_INDEX_KEY: randomBytes(32).toString('base64') } });
  await seedDemoData(saga.database, { cipher: saga.cipher, today: travelDay, days: 1 });
  aliceId = await saga
    .database('users')
    .where({ email_lookup: emailLookup(saga.cipher, aliceDemoUser.email) })
    .first<{ id: string }>('id')
    .then((row) => row.id);
  api = await composeTestApi(saga);
  server = await startServer(api.app);
  token = (
    await fetchJson<Schemas['TokenResponse']>(server.baseUrl, 'POST', '/api/auth/login', {
      body: { email: aliceDemoUser.email, password: aliceDemoUser.password },
    })
  ).body.access_token;

  firstRun = await makeDemoBookings({ baseUrl: server.baseUrl, today: startDay });
  bookingsAfterFirstRun = await aliceBookingIds();
  secondRun = await makeDemoBookings({ baseUrl: server.baseUrl, today: startDay });
});

afterAll(async () => {
  if (saga === undefined) return;
  await server?.close();
  await saga.stopWorkers();
  if (aliceId !== undefined) await removeBookings(saga.database, await aliceBookingIds());
  await saga
    .database('users')
    .whereIn(
      'email_lookup',
      demoUsers.map((user) => emailLookup(saga.cipher, user.email)),
    )
    .delete();
  await api?.remove();
  await saga.stop();
});

describe('the demo bookings', () => {
  it(`books each of the seed's segments ${DEMO_BOOKING_DAYS_AHEAD} days ahead, confirmed`, async () => {
    expect(firstRun.made).toBe(demoBookings.length);
    expect(firstRun.alreadyThere).toBe(0);
    expect(firstRun.segments).toContain(`AMS-BER ${travelDay} 07:00 AMS→HAJ 3A`);
    expect(bookingsAfterFirstRun).toHaveLength(demoBookings.length);
    const statuses = await saga
      .database('bookings')
      .whereIn('id', bookingsAfterFirstRun)
      .pluck<string[]>('status');
    expect(new Set(statuses)).toEqual(new Set(['CONFIRMED']));
  });

  it('shows a seat taken on one segment of a trip and free on another', async () => {
    const amsterdamToHanover = { boarding: 'AMS', alighting: 'HAJ' };
    const hanoverToBerlin = { boarding: 'HAJ', alighting: 'BER' };
    expect(await seatStatus('AMS-BER', '07:00', amsterdamToHanover, '3A')).toBe('TAKEN');
    expect(await seatStatus('AMS-BER', '07:00', hanoverToBerlin, '3A')).toBe('FREE');
    expect(await seatStatus('AMS-BER', '07:00', amsterdamToHanover, '3B')).toBe('FREE');
    expect(await seatStatus('AMS-BER', '07:00', hanoverToBerlin, '3B')).toBe('TAKEN');

    // One seat sold twice, Brussels to Rotterdam and Amsterdam to Berlin: free only on the leg between.
    expect(await seatStatus('BRU-BER', '06:00', { boarding: 'BRU', alighting: 'RTM' }, '5C')).toBe('TAKEN');
    expect(await seatStatus('BRU-BER', '06:00', { boarding: 'RTM', alighting: 'AMS' }, '5C')).toBe('FREE');
    expect(await seatStatus('BRU-BER', '06:00', { boarding: 'AMS', alighting: 'BER' }, '5C')).toBe('TAKEN');
  });

  it('makes no new booking when it runs again', async () => {
    expect(secondRun).toEqual({ ...firstRun, made: 0, alreadyThere: demoBookings.length });
    expect(await aliceBookingIds()).toEqual(bookingsAfterFirstRun);
  });
});
