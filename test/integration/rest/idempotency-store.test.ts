// The Idempotency-Key store against PostgreSQL: reserved ids, replay, reuse, in-flight, let go, expiry, takeover, per customer.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createIdempotencyStore } from '../../../src/api/rest/idempotency';
import type { IdempotentRequest } from '../../../src/application/idempotency-key-store';
import type { RestResponse } from '../../../src/api/rest/responses';
import { bookingProcessing, DomainError, seatUnavailable, unavailable } from '../../../src/domain/errors';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { openTestDatabase, testCipher } from '../../support/database';
import { insertUser, type TestUser } from '../../support/users';

jest.setTimeout(30_000);

let database: Knex;
let cipher: FieldCipher;
let customer: TestUser;
let otherCustomer: TestUser;
let store: ReturnType<typeof createIdempotencyStore>;

beforeAll(async () => {
  database = openTestDatabase();
  cipher = testCipher();
  customer = await insertUser(database, cipher, { roles: ['customer'] });
  otherCustomer = await insertUser(database, cipher, { roles: ['customer'] });
  store = createIdempotencyStore({
    database,
    cipher,
    settings: { retentionHours: 24, inFlightLockSeconds: 60 },
  });
});

afterAll(async () => {
  if (!database) return;
  await database('users').whereIn('id', [customer?.id, otherCustomer?.id].filter(Boolean)).delete();
  await database.destroy();
});

function request(overrides: Partial<IdempotentRequest> = {}): IdempotentRequest {
  return {
    customerId: customer.id,
    key: randomUUID(),
    operationId: 'createBooking',
    fingerprint: 'fingerprint-a',
    instance: '/v1/bookings',
    requestId: 'first-request',
    ...overrides,
  };
}

const created: RestResponse = {
  status: 201,
  headers: {
    'content-type': 'application/json; charset=utf-8',
    location: '/v1/bookings/b1',
    etag: '"1"',
    'x-request-id': 'first-request',
  },
  body: { id: 'b1', contact_email: 'secret.person@example.com' },
};

/** An operation that answers `response`, counting its runs and recording the reserved id each run got. */
function counting(response: RestResponse = created) {
  const calls = { count: 0, reservedIds: [] as string[] };
  const operation = (reservedId: string) => {
    calls.count += 1;
    calls.reservedIds.push(reservedId);
    return Promise.resolve(response);
  };
  return { calls, operation };
}

/** An operation that fails with `error`, recording the reserved id it got. */
function failing(error: Error) {
  const reservedIds: string[] = [];
  const operation = (reservedId: string): Promise<RestResponse> => {
    reservedIds.push(reservedId);
    return Promise.reject(error);
  };
  return { reservedIds, operation };
}

/** As if the process running the request had died: the key stays in flight, its lock already past. */
async function abandon(request: IdempotentRequest): Promise<void> {
  await database('idempotency_keys')
    .where({ customer_id: request.customerId, key: request.key })
    .update({
      state: 'IN_FLIGHT',
      response_status: null,
      response_body: null,
      response_headers: null,
      locked_until: database.raw(`now() - interval '1 second'`),
    });
}

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('idempotency store', () => {
  it('runs once and replays status, replayable headers and body to a repeat', async () => {
    const first = request();
    const { calls, operation } = counting();
    expect(await store.run(first, operation)).toBe(created);
    const replayed = await store.run({ ...first, requestId: 'second-request' }, operation);
    expect(calls.count).toBe(1);
    expect(replayed).toEqual({
      status: 201,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        location: '/v1/bookings/b1',
        etag: '"1"',
        'idempotent-replayed': 'true',
      },
      body: created.body,
    });
  });

  it('stores the response encrypted and keeps the key for at least a day', async () => {
    const first = request();
    await store.run(first, counting().operation);
    const row = await database('idempotency_keys')
      .where({ customer_id: customer.id, key: first.key })
      .first<{ state: string; response_body: string; kept_a_day: boolean } | undefined>(
        'state',
        'response_body',
        database.raw(`expires_at - created_at >= interval '24 hours' AS kept_a_day`),
      );
    expect(row).toMatchObject({ state: 'COMPLETED', kept_a_day: true });
    expect(row?.response_body).toMatch(/^enc:/);
    expect(row?.response_body).not.toContain('secret.person');
  });

  it('refuses the same key with another request', async () => {
    const first = request();
    await store.run(first, counting().operation);
    const { calls, operation } = counting();
    const error = await rejection(store.run({ ...first, fingerprint: 'fingerprint-b' }, operation));
    expect(error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(calls.count).toBe(0);
  });

  it('refuses a repeat while the first request still runs, with a retry hint', async () => {
    const first = request();
    let finish: (response: RestResponse) => void = () => undefined;
    let started: () => void = () => undefined;
    const operationStarted = new Promise<void>((resolve) => (started = resolve));
    const running = store.run(first, () => {
      started();
      return new Promise<RestResponse>((resolve) => (finish = resolve));
    });
    // The key is reserved once the operation runs.
    await operationStarted;
    const error = await rejection(store.run(first, counting().operation));
    expect(error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(error.details.retryAfterSeconds).toBe(1);
    finish(created);
    await running;
    expect((await store.run(first, counting().operation)).headers['idempotent-replayed']).toBe('true');
  });

  it('lets only one of many simultaneous first requests run', async () => {
    const first = request();
    const { calls, operation } = counting();
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => store.run(first, operation)));
    expect(calls.count).toBe(1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected')
        expect((outcome.reason as DomainError).code).toBe('IDEMPOTENCY_KEY_IN_USE');
    }
  });

  it('lets a retry take the key over at once when the request fails in a way a retry may cure', async () => {
    const first = request();
    await expect(store.run(first, () => Promise.reject(unavailable()))).rejects.toThrow(DomainError);
    await expect(store.run(first, () => Promise.reject(new Error('connection reset')))).rejects.toThrow(
      'connection reset',
    );
    const { calls, operation } = counting();
    await store.run(first, operation);
    expect(calls.count).toBe(1);
  });

  it('reserves one id per key: every run of the same request, a take-over included, gets the same id', async () => {
    const first = request();
    const unavailableOnce = failing(unavailable());
    await expect(store.run(first, unavailableOnce.operation)).rejects.toThrow(DomainError);
    const diedOnce = counting();
    await store.run(first, diedOnce.operation);
    await abandon(first);
    const tookOver = counting();
    await store.run({ ...first, requestId: 'the-retry' }, tookOver.operation);

    const [reservedId] = unavailableOnce.reservedIds;
    expect(reservedId).toMatch(/^[0-9a-f-]{36}$/);
    expect([...diedOnce.calls.reservedIds, ...tookOver.calls.reservedIds]).toEqual([reservedId, reservedId]);
    const other = counting();
    await store.run(request(), other.operation);
    expect(other.calls.reservedIds[0]).not.toBe(reservedId);
  });

  it('leaves a request answered still-processing to its retry, which runs again with the same reserved id', async () => {
    const first = request();
    const processing = failing(bookingProcessing(randomUUID(), 1));
    await expect(store.run(first, processing.operation)).rejects.toMatchObject({
      code: 'BOOKING_PROCESSING',
    });
    const { calls, operation } = counting();
    expect(await store.run(first, operation)).toBe(created);
    expect(processing.reservedIds[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(calls.reservedIds).toEqual(processing.reservedIds);
    // Only the outcome is stored and replayed.
    const replayed = await store.run(first, counting().operation);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
  });

  it('keeps a key whose request may have started something tied to its body: another body is refused', async () => {
    const first = request();
    await expect(store.run(first, failing(unavailable()).operation)).rejects.toThrow(DomainError);
    const { calls, operation } = counting();
    const error = await rejection(store.run({ ...first, fingerprint: 'fingerprint-b' }, operation));
    expect(error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(calls.count).toBe(0);
  });

  it('stores a final business refusal and replays it as the same problem', async () => {
    const first = request();
    const refusal = await store.run(first, () => Promise.reject(seatUnavailable(['12C'])));
    expect(refusal.status).toBe(409);
    expect(refusal.body).toMatchObject({ code: 'SEAT_UNAVAILABLE', request_id: 'first-request' });
    const { calls, operation } = counting();
    const replayed = await store.run({ ...first, requestId: 'second-request' }, operation);
    expect(calls.count).toBe(0);
    expect(replayed.status).toBe(409);
    expect(replayed.headers['content-type']).toBe('application/problem+json');
    expect(replayed.body).toEqual(refusal.body);
  });

  it('scopes keys per customer', async () => {
    const shared = randomUUID();
    await store.run(request({ key: shared }), counting().operation);
    const { calls, operation } = counting();
    await store.run(
      request({ key: shared, customerId: otherCustomer.id, fingerprint: 'fingerprint-b' }),
      operation,
    );
    expect(calls.count).toBe(1);
  });

  it('forgets an expired key, so it may be used again for anything, with a new reserved id', async () => {
    const first = request();
    const before = counting();
    await store.run(first, before.operation);
    await database('idempotency_keys')
      .where({ customer_id: customer.id, key: first.key })
      .update({
        created_at: database.raw(`now() - interval '25 hours'`),
        expires_at: database.raw(`now() - interval '1 hour'`),
      });
    const { calls, operation } = counting();
    await store.run({ ...first, fingerprint: 'fingerprint-b' }, operation);
    expect(calls.count).toBe(1);
    expect(calls.reservedIds[0]).not.toBe(before.calls.reservedIds[0]);
  });

  it('lets a retry take over a key whose first request died, but only for the same request', async () => {
    const first = request();
    await database('idempotency_keys').insert({
      customer_id: customer.id,
      key: first.key,
      operation: first.operationId,
      request_hash: first.fingerprint,
      state: 'IN_FLIGHT',
      locked_until: database.raw(`now() - interval '1 second'`),
    });
    const error = await rejection(
      store.run({ ...first, fingerprint: 'fingerprint-b' }, counting().operation),
    );
    expect(error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const { calls, operation } = counting();
    await store.run(first, operation);
    expect(calls.count).toBe(1);
  });

  it('answers a key stored under the earlier fingerprint scheme for the same request, and takes it over', async () => {
    const fingerprints = store.fingerprintOf('createBooking', {}, { trip_id: 't1' });
    expect(fingerprints.fingerprint).not.toBe(fingerprints.earlierFingerprint);
    const stored = request({ fingerprint: fingerprints.earlierFingerprint });
    await store.run(stored, counting().operation);
    const { calls, operation } = counting();
    const replayed = await store.run({ ...stored, ...fingerprints }, operation);
    expect(calls.count).toBe(0);
    expect(replayed.headers['idempotent-replayed']).toBe('true');

    const died = request();
    await database('idempotency_keys').insert({
      customer_id: customer.id,
      key: died.key,
      operation: died.operationId,
      request_hash: fingerprints.earlierFingerprint,
      state: 'IN_FLIGHT',
      locked_until: database.raw(`now() - interval '1 second'`),
    });
    const other = store.fingerprintOf('createBooking', {}, { trip_id: 't2' });
    expect((await rejection(store.run({ ...died, ...other }, counting().operation))).code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    const retry = counting();
    await store.run({ ...died, ...fingerprints }, retry.operation);
    expect(retry.calls.count).toBe(1);
  });

  it('leaves callers without an account to the operation, which refuses them itself', async () => {
    for (const customerId of [randomUUID(), 'external-subject-42']) {
      const { calls, operation } = counting();
      await store.run(request({ customerId }), operation);
      expect(calls.count).toBe(1);
    }
  });

  it('purges expired keys and keeps live ones', async () => {
    const live = request();
    const expired = request();
    await store.run(live, counting().operation);
    await store.run(expired, counting().operation);
    await database('idempotency_keys')
      .where({ customer_id: customer.id, key: expired.key })
      .update({
        created_at: database.raw(`now() - interval '25 hours'`),
        expires_at: database.raw(`now() - interval '1 hour'`),
      });
    expect(await store.purgeExpired()).toBeGreaterThanOrEqual(1);
    const keys = await database('idempotency_keys').where('customer_id', customer.id).pluck('key');
    expect(keys).toContain(live.key);
    expect(keys).not.toContain(expired.key);
  });
});
