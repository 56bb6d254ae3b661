// The client package's reading of answers: 201/200 versus 202 BookingProcessing, problems, the Location poll, tokens.
import {
  BookingServiceError,
  bookingAnswerOf,
  createBookingServiceClient,
  createTokenSource,
  successOf,
  waitForBooking,
  type Booking,
  type BookingProcessing,
  type Problem,
} from '@bus-booking/client';

const bookingId = '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e';

/** Only the fields these tests read; the rest of a booking does not matter to the splitting. */
const booking = { id: bookingId, status: 'PENDING_PAYMENT' } as Booking;
const processing: BookingProcessing = {
  id: bookingId,
  status: 'PROCESSING',
  detail: 'The booking is being made.',
  retry_after_seconds: 2,
};
const problem: Problem = {
  type: 'https://errors.bus-booking.example/seat-unavailable',
  title: 'Seat unavailable',
  status: 409,
  detail: 'Seat 3A is taken.',
  code: 'SEAT_UNAVAILABLE',
  request_id: 'req-1',
};

const answer = (status: number, headers: Record<string, string> = {}) =>
  new Response(null, { status, headers });

describe('bookingAnswerOf', () => {
  it('reads 201 and 200 as the booking, with its ETag', () => {
    expect(bookingAnswerOf({ data: booking, response: answer(201, { etag: '"3"' }) })).toEqual({
      status: 201,
      booking,
      etag: '"3"',
    });
    expect(bookingAnswerOf({ data: booking, response: answer(200) })).toEqual({
      status: 200,
      booking,
      etag: null,
    });
  });

  it('reads 202 as BookingProcessing, with its Location and Retry-After', () => {
    const location = `/v1/bookings/${bookingId}`;
    expect(
      bookingAnswerOf({ data: processing, response: answer(202, { location, 'retry-after': '3' }) }),
    ).toEqual({ status: 202, processing, location, retryAfterSeconds: 3 });
  });

  it("takes Retry-After as an HTTP date too, and the body's retry_after_seconds when the header is absent", () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.parse('2026-11-29T04:00:00Z'));
    const dated = (retryAfter: string) =>
      bookingAnswerOf({ data: processing, response: answer(202, { 'retry-after': retryAfter }) });
    try {
      expect(dated('Sun, 29 Nov 2026 04:00:05 GMT')).toMatchObject({ retryAfterSeconds: 5 });
      expect(dated('Sun, 29 Nov 2026 03:59:00 GMT')).toMatchObject({ retryAfterSeconds: 0 });
    } finally {
      now.mockRestore();
    }
    const bare = bookingAnswerOf({ data: processing, response: answer(202) });
    expect(bare).toMatchObject({ status: 202, location: null, retryAfterSeconds: 2 });
  });

  it('refuses an answer whose body and HTTP status disagree, which the contract never gives', () => {
    expect(() => bookingAnswerOf({ data: processing, response: answer(200) })).toThrow(
      new BookingServiceError(200, undefined, '200 with a PROCESSING body'),
    );
    expect(() => bookingAnswerOf({ data: booking, response: answer(202) })).toThrow(
      '202 with a booking body',
    );
  });

  it('throws an error answer as a BookingServiceError carrying its RFC 9457 problem', () => {
    let thrown: unknown;
    try {
      bookingAnswerOf({ error: problem, response: answer(409) });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BookingServiceError);
    expect(thrown).toMatchObject({ status: 409, problem, message: '409 SEAT_UNAVAILABLE Seat 3A is taken.' });
  });

  it('keeps no problem when the error body is not one (a proxy page)', () => {
    expect(() => successOf({ error: '<html>Bad gateway</html>', response: answer(502) })).toThrow(
      expect.objectContaining({ status: 502, problem: undefined }) as Error,
    );
  });
});

/** A client whose fetch answers from `answers` in turn and records each request. */
function recordingClient(answers: (() => Response)[], accessToken?: Parameters<typeof createTokenSource>[0]) {
  const requests: Request[] = [];
  const client = createBookingServiceClient({
    baseUrl: 'https://api.example.test',
    accessToken: accessToken === undefined ? 'fixed-token' : createTokenSource(accessToken),
    fetch: (request: Request) => {
      requests.push(request);
      const next = answers.shift();
      if (next === undefined) throw new Error(`no answer left for ${request.url}`);
      return Promise.resolve(next());
    },
  });
  return { client, requests };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });

describe('waitForBooking', () => {
  it("reads the 202's Location after each Retry-After until the booking is there", async () => {
    const { client, requests } = recordingClient([
      json(202, { ...processing, retry_after_seconds: 0 }, { 'retry-after': '0' }),
      json(200, booking, { etag: '"1"' }),
    ]);
    const seen: number[] = [];
    const first = bookingAnswerOf({
      data: { ...processing, retry_after_seconds: 0 },
      response: answer(202, { location: `/api/bookings/${bookingId}`, 'retry-after': '0' }),
    });
    const settled = await waitForBooking(client, first, {
      onProcessing: (processing) => seen.push(processing.status),
    });
    expect(settled).toEqual({ booking, etag: '"1"' });
    expect(seen).toEqual([202, 202]);
    expect(requests.map((request) => `${request.method} ${new URL(request.url).pathname}`)).toEqual([
      `GET /v1/bookings/${bookingId}`,
      `GET /v1/bookings/${bookingId}`,
    ]);
  });

  it('throws the problem of a create that ended without a booking', async () => {
    const { client } = recordingClient([json(409, problem, { 'content-type': 'application/problem+json' })]);
    const first = bookingAnswerOf({ data: processing, response: answer(202, { 'retry-after': '0' }) });
    await expect(waitForBooking(client, first)).rejects.toMatchObject({ status: 409, problem });
  });

  it('stops waiting when its signal aborts', async () => {
    const { client, requests } = recordingClient([]);
    const first = bookingAnswerOf({ data: processing, response: answer(202, { 'retry-after': '30' }) });
    const controller = new AbortController();
    const waiting = waitForBooking(client, first, { signal: controller.signal });
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    expect(requests).toHaveLength(0);
  });
});

describe('createBookingServiceClient', () => {
  it('sends a fixed token as the bearer token', async () => {
    const { client, requests } = recordingClient([json(200, { routes: [], next_page_token: null })]);
    await client.GET('/v1/routes');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer fixed-token');
  });

  it("asks a token source before each request, so a refreshed token is the next request's", async () => {
    let clock = 0;
    let issued = 0;
    const { client, requests } = recordingClient(
      [json(200, { routes: [] }), json(200, { routes: [] }), json(200, { routes: [] })],
      {
        now: () => clock,
        refreshMarginSeconds: 10,
        fetchToken: () => Promise.resolve({ accessToken: `token-${(issued += 1)}`, expiresInSeconds: 60 }),
      },
    );
    await client.GET('/v1/routes');
    clock = 49_000;
    await client.GET('/v1/routes');
    clock = 50_000;
    await client.GET('/v1/routes');
    expect(requests.map((request) => request.headers.get('authorization'))).toEqual([
      'Bearer token-1',
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });
});
