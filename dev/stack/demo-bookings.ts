// The seed's demo bookings, made and paid through the REST API as Alice would, each a booking with its own workflow.
import type { components } from '@bus-booking/client';
import { aliceDemoUser, DEMO_BOOKING_DAYS_AHEAD, demoBookings, type DemoBooking } from '../seed';

type Schemas = components['schemas'];
type Booking = Schemas['Booking'];

export interface DemoBookingSummary {
  /** Bookings this run made, or found unpaid and paid. */
  made: number;
  /** Bookings an earlier run made (Alice's booking of that seat and segment on the trip, whatever became of it). */
  alreadyThere: number;
  /** `AMS-BER 2026-12-05 07:00 AMS→HAJ 3A`, one per demo booking. */
  segments: string[];
}

interface Answer<Body> {
  status: number;
  body: Body;
  retryAfterSeconds: number;
}

const retryable = new Set([429, 503]);
const maxAttempts = 5;

function retryAfterMs(response: Response): number {
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) * 1000 : 1000;
}

/** One caller of the API with Alice's token: every answer outside 2xx throws, naming the problem's code. */
class DemoCaller {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  async call<Body>(
    method: 'GET' | 'POST',
    path: string,
    options: { body?: unknown; idempotencyKey?: string } = {},
  ): Promise<Answer<Body>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    let response = await this.send(method, path, headers, options.body);
    // A busy API answers 503 or 429 with Retry-After; every call here is a read or carries an Idempotency-Key.
    for (let attempt = 1; retryable.has(response.status) && attempt < maxAttempts; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, retryAfterMs(response)));
      response = await this.send(method, path, headers, options.body);
    }
    const text = await response.text();
    const body: unknown = text === '' ? undefined : JSON.parse(text);
    if (!response.ok) {
      const problem = body as Partial<Schemas['Problem']> | undefined;
      throw new Error(
        `${method} ${path} answered ${response.status} ${problem?.code ?? ''} ${problem?.detail ?? ''}`.trim(),
      );
    }
    return {
      status: response.status,
      body: body as Body,
      retryAfterSeconds: Number(response.headers.get('retry-after') ?? 1),
    };
  }

  private send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<Response> {
    return fetch(new URL(path, this.baseUrl), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  }

  /** A booking operation's answer once the booking is no longer being made: a 202 says when to read it again. */
  async settled(answer: Answer<Booking | Schemas['BookingProcessing']>, bookingId: string): Promise<Booking> {
    let current = answer;
    while (current.status === 202) {
      await new Promise((resolve) => setTimeout(resolve, current.retryAfterSeconds * 1000));
      current = await this.call<Booking>('GET', `/v1/bookings/${bookingId}`);
    }
    return current.body as Booking;
  }
}

function calendarDateAfter(today: Date | string, days: number): string {
  const start = typeof today === 'string' ? new Date(`${today}T00:00:00Z`) : today;
  return new Date(start.getTime() + days * 86_400_000).toISOString().slice(0, 10);
}

function localClock(instant: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(instant));
}

async function routesByCode(caller: DemoCaller): Promise<Map<string, Schemas['Route']>> {
  const routes = new Map<string, Schemas['Route']>();
  let pageToken: string | null | undefined;
  do {
    const query = new URLSearchParams({ page_size: '100', ...(pageToken ? { page_token: pageToken } : {}) });
    const { body } = await caller.call<Schemas['RouteList']>('GET', `/v1/routes?${query.toString()}`);
    for (const route of body.routes) routes.set(route.code, route);
    pageToken = body.next_page_token;
  } while (pageToken);
  return routes;
}

async function aliceBookings(caller: DemoCaller): Promise<Booking[]> {
  const bookings: Booking[] = [];
  let pageToken: string | null | undefined;
  do {
    const query = new URLSearchParams({ page_size: '100', ...(pageToken ? { page_token: pageToken } : {}) });
    const { body } = await caller.call<Schemas['BookingList']>('GET', `/v1/bookings?${query.toString()}`);
    bookings.push(...body.bookings);
    pageToken = body.next_page_token;
  } while (pageToken);
  return bookings;
}

function isDemoBooking(booking: Booking, tripId: string, demo: DemoBooking): boolean {
  return (
    booking.trip_id === tripId &&
    booking.segment?.boarding_stop.code === demo.boardingStopCode &&
    booking.segment?.alighting_stop.code === demo.alightingStopCode &&
    booking.passengers.some((passenger) => passenger.seat_number === demo.seatNumber)
  );
}

/**
 * Books `plan` (the seed's demo bookings) on the trips `DEMO_BOOKING_DAYS_AHEAD` days after `today`, as Alice, and
 * pays for each. A booking Alice already has for that seat and segment of the trip is left as it is (paid if still
 * unpaid), and fixed Idempotency-Keys make a create or payment retried after a crash join the first one.
 */
export async function makeDemoBookings(options: {
  baseUrl: string;
  today: Date | string;
  plan?: readonly DemoBooking[];
  /** What each booking is paid with: the simulator's `tok_visa` unless given (`pm_card_visa` for Stripe's). */
  payment?: Schemas['ConfirmPaymentRequest'];
}): Promise<DemoBookingSummary> {
  const plan = options.plan ?? demoBookings;
  const travelDate = calendarDateAfter(options.today, DEMO_BOOKING_DAYS_AHEAD);
  const { body: tokens } = await new DemoCaller(options.baseUrl, undefined).call<Schemas['TokenResponse']>(
    'POST',
    '/api/auth/login',
    { body: { email: aliceDemoUser.email, password: aliceDemoUser.password } },
  );
  const caller = new DemoCaller(options.baseUrl, tokens.access_token);
  const routes = await routesByCode(caller);
  const existing = await aliceBookings(caller);
  const tripsByRoute = new Map<string, Schemas['TripAvailability'][]>();
  const summary: DemoBookingSummary = { made: 0, alreadyThere: 0, segments: [] };

  for (const demo of plan) {
    const route = routes.get(demo.routeCode);
    if (route === undefined) throw new Error(`demo route ${demo.routeCode} is not in the catalogue`);
    if (!tripsByRoute.has(route.code)) {
      const { body } = await caller.call<Schemas['RouteAvailability']>(
        'GET',
        `/v1/routes/${route.id}/availability?date=${travelDate}`,
      );
      tripsByRoute.set(route.code, body.trips);
    }
    const trip = tripsByRoute
      .get(route.code)
      ?.find(
        (candidate) => localClock(candidate.departure_time, route.origin.time_zone) === demo.departureTime,
      );
    if (trip === undefined) {
      throw new Error(`no ${demo.routeCode} trip leaves at ${demo.departureTime} on ${travelDate}`);
    }
    const seat = trip.seat_map.find((entry) => entry.seat_number === demo.seatNumber);
    if (seat === undefined) throw new Error(`seat ${demo.seatNumber} is not on the ${demo.routeCode} coach`);
    summary.segments.push(
      `${demo.routeCode} ${travelDate} ${demo.departureTime} ${demo.boardingStopCode}→${demo.alightingStopCode} ${demo.seatNumber}`,
    );

    let booking = existing.find((candidate) => isDemoBooking(candidate, trip.trip_id, demo));
    if (booking !== undefined && booking.status !== 'PENDING_PAYMENT') {
      summary.alreadyThere += 1;
      continue;
    }
    if (booking === undefined) {
      const created = await caller.call<Booking | Schemas['BookingProcessing']>('POST', '/v1/bookings', {
        idempotencyKey: `demo-booking:${trip.trip_id}:${demo.boardingStopCode}-${demo.alightingStopCode}:${demo.seatNumber}`,
        body: {
          trip_id: trip.trip_id,
          boarding_stop: demo.boardingStopCode,
          alighting_stop: demo.alightingStopCode,
          contact_email: aliceDemoUser.email,
          passengers: [
            {
              first_name: demo.passenger.firstName,
              last_name: demo.passenger.lastName,
              email: aliceDemoUser.email,
              seat_number: demo.seatNumber,
              fare_class: seat.fare_class,
            },
          ],
        } satisfies Schemas['CreateBookingRequest'],
      });
      booking = await caller.settled(created, created.body.id);
    }
    if (booking.status === 'PENDING_PAYMENT') {
      const paid = await caller.call<Booking | Schemas['BookingProcessing']>(
        'POST',
        `/v1/bookings/${booking.id}/payment`,
        {
          idempotencyKey: `demo-payment:${booking.id}`,
          body: options.payment ?? ({ payment_token: 'tok_visa' } satisfies Schemas['ConfirmPaymentRequest']),
        },
      );
      booking = await caller.settled(paid, booking.id);
    }
    if (booking.status !== 'CONFIRMED') {
      throw new Error(`demo booking ${booking.id} ended ${booking.status}, not CONFIRMED`);
    }
    summary.made += 1;
  }
  return summary;
}
