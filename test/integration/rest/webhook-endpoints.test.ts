// Partner webhook subscriptions over REST against the real app and PostgreSQL: endpoints, secrets, pings, deliveries.
import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type { Knex } from 'knex';
import {
  createPartnerWebhookApplication,
  maximumEndpointsPerPartner,
} from '../../../src/application/partner-webhooks';
import { readEndpointForDelivery } from '../../../src/db/webhook-endpoints';
import type { Role } from '../../../src/domain/roles';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { openTestDatabase, testCipher, testEnvelopePattern } from '../../support/database';
import { expectContract, observe, type ObservedResponse } from '../../support/rest-contract';
import {
  bookingsOutOfScope,
  buildApp,
  createTokenIssuer,
  startServer,
  type RunningServer,
} from '../../support/rest-app';
import {
  insertDelivery,
  loopbackWebhookSender,
  startWebhookReceiver,
  verifiedWith,
  type WebhookReceiver,
} from '../../support/webhook-endpoint-fixtures';

type Json = Record<string, unknown>;
type Caller = 'partnerA' | 'partnerB' | 'agent' | 'admin' | 'noScope';

let database: Knex;
let cipher: FieldCipher;
let server: RunningServer;
/** The same application where the deployment allows https endpoints only. */
let strictServer: RunningServer;
let receiver: WebhookReceiver;
const nudges: { endpointId: string; subjectId: string }[] = [];
const partyIds: Record<Caller, string> = {
  partnerA: randomUUID(),
  partnerB: randomUUID(),
  agent: randomUUID(),
  admin: randomUUID(),
  noScope: randomUUID(),
};
const tokens = {} as Record<Caller, string>;

beforeAll(async () => {
  database = openTestDatabase({ applicationName: 'webhook-endpoint-tests' });
  cipher = testCipher();
  receiver = await startWebhookReceiver();
  const issuer = await createTokenIssuer();
  const roles: Record<Caller, Role[]> = {
    partnerA: [],
    partnerB: [],
    agent: ['agent'],
    admin: ['admin'],
    noScope: [],
  };
  for (const caller of Object.keys(roles) as Caller[]) {
    tokens[caller] = await issuer.issueToken({
      userId: partyIds[caller],
      roles: roles[caller],
      scopes: caller === 'noScope' ? ['bookings:read'] : ['webhooks:manage'],
    });
  }
  // The receiver is on a loopback port: https is not required of it, and the sender here has no outbound guard.
  const webhooks = createPartnerWebhookApplication({
    database,
    cipher,
    sender: loopbackWebhookSender(),
    deliveries: {
      nudge: (target) => {
        nudges.push(target);
        return Promise.resolve();
      },
    },
    allowHttp: true,
  });
  const httpsOnly = createPartnerWebhookApplication({
    database,
    cipher,
    sender: loopbackWebhookSender(),
    deliveries: { nudge: () => Promise.reject(new Error('no delivery is woken in these tests')) },
    allowHttp: false,
  });
  server = await startServer(
    buildApp({
      database,
      cipher,
      operationGuard: issuer.operationGuard,
      bookings: bookingsOutOfScope,
      applications: { webhooks },
    }),
  );
  strictServer = await startServer(
    buildApp({
      database,
      cipher,
      operationGuard: issuer.operationGuard,
      bookings: bookingsOutOfScope,
      applications: { webhooks: httpsOnly },
    }),
  );
});

afterAll(async () => {
  await server?.close();
  await strictServer?.close();
  await receiver?.close();
  if (database !== undefined) {
    const partners = Object.values(partyIds);
    const endpoints = database('webhook_endpoints').whereIn('partner_id', partners).select('id');
    const deliveries = database('webhook_deliveries').whereIn('endpoint_id', endpoints).select('id');
    const events = database('webhook_deliveries').whereIn('endpoint_id', endpoints).select('event_id');
    await database('webhook_attempts').whereIn('delivery_id', deliveries).delete();
    const eventIds = (await events).map((row: { event_id: string }) => row.event_id);
    await database('webhook_deliveries').whereIn('endpoint_id', endpoints).delete();
    await database('partner_events').whereIn('id', eventIds).delete();
    await database('webhook_endpoints').whereIn('partner_id', partners).delete();
    await database.destroy();
  }
});

async function call(
  caller: Caller,
  method: string,
  path: string,
  body?: unknown,
  on: RunningServer = server,
): Promise<ObservedResponse & { body: Json }> {
  const response = await fetch(`${on.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${tokens[caller]}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await observe(response)) as ObservedResponse & { body: Json };
}

const endpointsPath = '/v1/webhooks/endpoints';

async function createEndpoint(caller: Caller, overrides: Json = {}) {
  const response = await call(caller, 'POST', endpointsPath, {
    url: receiver.url,
    event_types: ['booking.cancelled', 'booking.confirmed'],
    description: 'Test receiver',
    ...overrides,
  });
  expect(response.status).toBe(201);
  expectContract('createWebhookEndpoint', response);
  const endpoint = response.body.endpoint as Json;
  return { id: endpoint.id as string, endpoint, secret: response.body.secret as string, response };
}

function fieldsOf(response: ObservedResponse): string[] {
  return ((response.body as { errors?: { field: string }[] }).errors ?? []).map((error) => error.field);
}

describe('an endpoint registered by a partner', () => {
  it('answers its secret once, stores it encrypted, and never shows it again', async () => {
    const { id, endpoint, secret, response } = await createEndpoint('partnerA');
    expect(response.headers.location).toBe(`${endpointsPath}/${id}`);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect(endpoint).toMatchObject({
      partner_id: partyIds.partnerA,
      url: receiver.url,
      description: 'Test receiver',
      // Answered in the contract's order, whatever order they were asked in.
      event_types: ['booking.confirmed', 'booking.cancelled'],
      scope: 'OWN_BOOKINGS',
      status: 'ENABLED',
      disabled_reason: null,
      previous_secret_expires_at: null,
      deleted_at: null,
    });

    const stored = (await database('webhook_endpoints').where({ id }).first()) as { secret: string };
    expect(stored.secret).toMatch(testEnvelopePattern);
    expect(stored.secret).not.toContain(secret.slice(6));

    const read = await call('partnerA', 'GET', `${endpointsPath}/${id}`);
    expect(read.status).toBe(200);
    expectContract('getWebhookEndpoint', read);
    expect(read.body).toEqual(endpoint);
    const listed = await call('partnerA', 'GET', endpointsPath);
    expect(listed.status).toBe(200);
    expectContract('listWebhookEndpoints', listed);
    for (const answer of [read, listed]) {
      expect(JSON.stringify(answer.body)).not.toContain(secret);
      expect(JSON.stringify(answer.body)).not.toContain('secret"');
    }
  });

  it('hears only its own bookings, while an agent’s or admin’s endpoint hears every booking', async () => {
    expect((await createEndpoint('partnerA')).endpoint.scope).toBe('OWN_BOOKINGS');
    expect((await createEndpoint('agent')).endpoint.scope).toBe('ALL_BOOKINGS');
    expect((await createEndpoint('admin')).endpoint.scope).toBe('ALL_BOOKINGS');
  });

  it('is listed to its partner alone, in pages, oldest first', async () => {
    const partner: Caller = 'partnerB';
    const made = [
      await createEndpoint(partner),
      await createEndpoint(partner),
      await createEndpoint(partner),
    ];
    const ids: string[] = [];
    let token: string | null = null;
    do {
      const query: string = `?page_size=2${token === null ? '' : `&page_token=${token}`}`;
      const page = await call(partner, 'GET', `${endpointsPath}${query}`);
      expect(page.status).toBe(200);
      expectContract('listWebhookEndpoints', page);
      const endpoints = page.body.endpoints as Json[];
      expect(endpoints.every((endpoint) => endpoint.partner_id === partyIds.partnerB)).toBe(true);
      ids.push(...endpoints.map((endpoint) => endpoint.id as string));
      token = page.body.next_page_token as string | null;
    } while (token !== null);
    expect(ids).toEqual(expect.arrayContaining(made.map((endpoint) => endpoint.id)));
    expect(ids.indexOf(made[0].id)).toBeLessThan(ids.indexOf(made[2].id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('changes url, event types and description, leaving what is not given', async () => {
    const { id } = await createEndpoint('partnerA');
    const changed = await call('partnerA', 'PATCH', `${endpointsPath}/${id}`, {
      url: `${receiver.url}/v2`,
      event_types: ['payment.refunded'],
    });
    expect(changed.status).toBe(200);
    expectContract('updateWebhookEndpoint', changed);
    expect(changed.body).toMatchObject({
      url: `${receiver.url}/v2`,
      event_types: ['payment.refunded'],
      description: 'Test receiver',
    });
    const described = await call('partnerA', 'PATCH', `${endpointsPath}/${id}`, { description: '' });
    expect(described.body).toMatchObject({ description: '', event_types: ['payment.refunded'] });
  });

  it('stops on disable, and on enable clears the reason and wakes each booking with deliveries waiting', async () => {
    const { id } = await createEndpoint('partnerA');
    const first = await insertDelivery(database, { endpointId: id, status: 'pending' });
    const second = await insertDelivery(database, { endpointId: id, status: 'pending' });
    await insertDelivery(database, { endpointId: id, subjectId: first.subjectId, sequence: 2 });
    await insertDelivery(database, { endpointId: id, status: 'delivered' });

    const disabled = await call('partnerA', 'PATCH', `${endpointsPath}/${id}`, { enabled: false });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ status: 'DISABLED', disabled_reason: 'disabled by request' });
    expect(disabled.body.disabled_at).toEqual(expect.any(String));
    expect(nudges.filter((nudge) => nudge.endpointId === id)).toEqual([]);

    // As the delivery workflow leaves it after a 410.
    await database('webhook_endpoints')
      .where({ id })
      .update({ disabled_reason: 'the endpoint answered 410 Gone' });
    const enabled = await call('partnerA', 'PATCH', `${endpointsPath}/${id}`, { enabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: 'ENABLED', disabled_reason: null, disabled_at: null });
    expect(nudges.filter((nudge) => nudge.endpointId === id)).toEqual(
      expect.arrayContaining([
        { endpointId: id, subjectId: first.subjectId },
        { endpointId: id, subjectId: second.subjectId },
      ]),
    );
    expect(nudges.filter((nudge) => nudge.endpointId === id)).toHaveLength(2);

    // Asked again, it wakes them again (a request whose waking failed is repeated); a change of description alone
    // wakes nothing.
    await call('partnerA', 'PATCH', `${endpointsPath}/${id}`, { enabled: true });
    expect(nudges.filter((nudge) => nudge.endpointId === id)).toHaveLength(4);
    await call('partnerA', 'PATCH', `${endpointsPath}/${id}`, { description: 'renamed' });
    expect(nudges.filter((nudge) => nudge.endpointId === id)).toHaveLength(4);
  });

  it('answers 503 when what waited cannot be woken, the change saved, so the request can be repeated', async () => {
    const created = await call(
      'partnerA',
      'POST',
      endpointsPath,
      {
        url: 'https://partner.example/hooks',
        event_types: ['booking.confirmed'],
      },
      strictServer,
    );
    const id = (created.body.endpoint as Json).id as string;
    await insertDelivery(database, { endpointId: id, status: 'pending' });
    await call('partnerA', 'PATCH', `${endpointsPath}/${id}`, { enabled: false }, strictServer);
    const enabled = await call(
      'partnerA',
      'PATCH',
      `${endpointsPath}/${id}`,
      { enabled: true },
      strictServer,
    );
    expectContract('updateWebhookEndpoint', enabled);
    expect(enabled.status).toBe(503);
    expect(enabled.body).toMatchObject({
      code: 'UNAVAILABLE',
      detail: 'The change is saved, but its deliveries could not be woken; send the same request again',
    });
    expect((await call('partnerA', 'GET', `${endpointsPath}/${id}`)).body.status).toBe('ENABLED');
  });

  it('is gone for its partner once deleted, while an admin still reads it and its log', async () => {
    const { id } = await createEndpoint('partnerA');
    await insertDelivery(database, { endpointId: id, status: 'delivered' });
    const deleted = await call('partnerA', 'DELETE', `${endpointsPath}/${id}`);
    expect(deleted.status).toBe(204);
    expectContract('deleteWebhookEndpoint', deleted);
    expect((await call('partnerA', 'GET', `${endpointsPath}/${id}`)).status).toBe(404);
    expect((await call('partnerA', 'DELETE', `${endpointsPath}/${id}`)).status).toBe(404);
    const listed = await call('partnerA', 'GET', `${endpointsPath}?page_size=100`);
    expect((listed.body.endpoints as Json[]).map((endpoint) => endpoint.id)).not.toContain(id);

    const operatorView = await call('admin', 'GET', `${endpointsPath}/${id}`);
    expect(operatorView.status).toBe(200);
    expect(operatorView.body.deleted_at).toEqual(expect.any(String));
    const log = await call('admin', 'GET', `${endpointsPath}/${id}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body.deliveries as Json[]).toHaveLength(1);
  });
});

describe('secret rotation', () => {
  it('answers a new secret once and signs with both during the overlap, a day by default', async () => {
    const { id, secret: first } = await createEndpoint('partnerA');
    const before = Date.now();
    const rotated = await call('partnerA', 'POST', `${endpointsPath}/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expectContract('rotateWebhookSecret', rotated);
    const second = rotated.body.secret as string;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    const endpoint = rotated.body.endpoint as Json;
    const overlapEnds = Date.parse(endpoint.previous_secret_expires_at as string);
    expect(overlapEnds).toBeGreaterThanOrEqual(before + 86_400_000 - 1000);
    expect(overlapEnds).toBeLessThanOrEqual(Date.now() + 86_400_000 + 1000);

    const forDelivery = await readEndpointForDelivery(database, cipher, id, new Date());
    expect(forDelivery?.secrets).toEqual([second, first]);
    const afterOverlap = await readEndpointForDelivery(database, cipher, id, new Date(overlapEnds + 1));
    expect(afterOverlap?.secrets).toEqual([second]);

    const received = receiver.received.length;
    const ping = await call('partnerA', 'POST', `${endpointsPath}/${id}/ping`);
    expect(ping.body.outcome).toBe('DELIVERED');
    const message = receiver.received[received];
    expect(message.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifiedWith(second, message)).toMatchObject({ type: 'webhook.ping' });
    expect(verifiedWith(first, message)).toMatchObject({ type: 'webhook.ping' });
    expect(JSON.stringify((await call('partnerA', 'GET', `${endpointsPath}/${id}`)).body)).not.toContain(
      second,
    );
  });

  it('stops the previous secret at once with an overlap of 0, and takes any overlap up to 7 days', async () => {
    const { id } = await createEndpoint('partnerA');
    const now = await call('partnerA', 'POST', `${endpointsPath}/${id}/rotate-secret`, {
      overlap_seconds: 0,
    });
    expect(now.status).toBe(200);
    expect((now.body.endpoint as Json).previous_secret_expires_at).toBeNull();
    expect((await readEndpointForDelivery(database, cipher, id, new Date()))?.secrets).toEqual([
      now.body.secret,
    ]);
    const week = await call('partnerA', 'POST', `${endpointsPath}/${id}/rotate-secret`, {
      overlap_seconds: 604_800,
    });
    expect(week.status).toBe(200);
    expect((await readEndpointForDelivery(database, cipher, id, new Date()))?.secrets).toEqual([
      week.body.secret,
      now.body.secret,
    ]);
  });
});

describe('ping', () => {
  it('sends a signed webhook.ping to the endpoint and answers how it went, recording no delivery', async () => {
    const { id, secret } = await createEndpoint('partnerA');
    const received = receiver.received.length;
    const ping = await call('partnerA', 'POST', `${endpointsPath}/${id}/ping`);
    expect(ping.status).toBe(200);
    expectContract('pingWebhookEndpoint', ping);
    expect(ping.body).toMatchObject({ outcome: 'DELIVERED', status_code: 200, error: null });
    expect(ping.body.duration_ms).toEqual(expect.any(Number));
    const message = receiver.received[received];
    expect(verifiedWith(secret, message)).toEqual({
      type: 'webhook.ping',
      timestamp: expect.any(String),
      data: { endpoint_id: id },
    });
    expect(await database('webhook_deliveries').where({ endpoint_id: id })).toEqual([]);
  });

  it('tells a 410 and a failing answer apart', async () => {
    const { id } = await createEndpoint('partnerA');
    try {
      receiver.answerWith(410);
      expect((await call('partnerA', 'POST', `${endpointsPath}/${id}/ping`)).body).toMatchObject({
        outcome: 'GONE',
        status_code: 410,
      });
      receiver.answerWith(500);
      expect((await call('partnerA', 'POST', `${endpointsPath}/${id}/ping`)).body).toMatchObject({
        outcome: 'FAILED',
        status_code: 500,
        error: 'HTTP 500',
      });
    } finally {
      receiver.answerWith(200);
    }
  });
});

describe('the delivery log', () => {
  it('lists deliveries newest first with their event and attempts, filters by status, and reads one', async () => {
    const { id } = await createEndpoint('partnerA');
    const old = await insertDelivery(database, {
      endpointId: id,
      status: 'delivered',
      type: 'booking.confirmed',
      attempts: [
        { statusCode: 503, error: 'HTTP 503', durationMs: 120 },
        { statusCode: 200, error: null, durationMs: 80 },
      ],
      createdAt: new Date(Date.now() - 60_000),
    });
    const recent = await insertDelivery(database, {
      endpointId: id,
      status: 'failed',
      type: 'booking.cancelled',
      sequence: 3,
      attempts: [{ statusCode: null, error: 'connect ECONNREFUSED', durationMs: 5 }],
    });

    const log = await call('partnerA', 'GET', `${endpointsPath}/${id}/deliveries`);
    expect(log.status).toBe(200);
    expectContract('listWebhookDeliveries', log);
    const deliveries = log.body.deliveries as Json[];
    expect(deliveries.map((delivery) => delivery.id)).toEqual([recent.deliveryId, old.deliveryId]);
    expect(deliveries[1]).toMatchObject({
      endpoint_id: id,
      event_id: old.eventId,
      event_type: 'booking.confirmed',
      subject_type: 'booking',
      subject_id: old.subjectId,
      sequence: 1,
      status: 'DELIVERED',
      attempt_count: 2,
      last_status_code: 200,
      attempts: [
        {
          attempt: 1,
          status_code: 503,
          error: 'HTTP 503',
          duration_ms: 120,
          attempted_at: expect.any(String),
        },
        { attempt: 2, status_code: 200, error: null, duration_ms: 80, attempted_at: expect.any(String) },
      ],
    });

    const failed = await call('partnerA', 'GET', `${endpointsPath}/${id}/deliveries?status=FAILED`);
    expect((failed.body.deliveries as Json[]).map((delivery) => delivery.id)).toEqual([recent.deliveryId]);

    const firstPage = await call('partnerA', 'GET', `${endpointsPath}/${id}/deliveries?page_size=1`);
    expect((firstPage.body.deliveries as Json[]).map((delivery) => delivery.id)).toEqual([recent.deliveryId]);
    const secondPage = await call(
      'partnerA',
      'GET',
      `${endpointsPath}/${id}/deliveries?page_size=1&page_token=${String(firstPage.body.next_page_token)}`,
    );
    expect((secondPage.body.deliveries as Json[]).map((delivery) => delivery.id)).toEqual([old.deliveryId]);
    expect(secondPage.body.next_page_token).toBeNull();

    const one = await call('partnerA', 'GET', `${endpointsPath}/${id}/deliveries/${recent.deliveryId}`);
    expect(one.status).toBe(200);
    expectContract('getWebhookDelivery', one);
    expect(one.body).toMatchObject({
      id: recent.deliveryId,
      status: 'FAILED',
      last_error: 'connect ECONNREFUSED',
    });
  });

  it('redelivers: the delivery is pending again and its booking’s delivery is woken', async () => {
    const { id } = await createEndpoint('partnerA');
    const failed = await insertDelivery(database, {
      endpointId: id,
      status: 'failed',
      attempts: [{ statusCode: 500, error: 'HTTP 500', durationMs: 10 }],
    });
    const answer = await call(
      'partnerA',
      'POST',
      `${endpointsPath}/${id}/deliveries/${failed.deliveryId}/redeliver`,
    );
    expect(answer.status).toBe(202);
    expectContract('redeliverWebhookDelivery', answer);
    expect(answer.body).toMatchObject({ id: failed.deliveryId, status: 'PENDING', next_attempt_at: null });
    expect(nudges).toContainEqual({ endpointId: id, subjectId: failed.subjectId });
  });
});

describe('bad requests', () => {
  async function refused(response: ObservedResponse, field: string, message: RegExp): Promise<void> {
    expect(response.status).toBe(400);
    expect((response.body as Json).code).toBe('VALIDATION_FAILED');
    expect(fieldsOf(response)).toEqual([field]);
    const errors = (response.body as { errors: { message: string }[] }).errors;
    expect(errors[0].message).toMatch(message);
    return Promise.resolve();
  }

  it('refuses a plain http URL where the deployment allows https only', async () => {
    const response = await call(
      'partnerA',
      'POST',
      endpointsPath,
      { url: 'http://partner.example/hooks', event_types: ['booking.confirmed'] },
      strictServer,
    );
    expectContract('createWebhookEndpoint', response);
    await refused(response, 'url', /must be an https URL/);
  });

  it('refuses a URL with credentials', async () => {
    const response = await call('partnerA', 'POST', endpointsPath, {
      url: 'https://user:pass@partner.example/hooks',
      event_types: ['booking.confirmed'],
    });
    await refused(response, 'url', /no credentials/);
  });

  it('refuses an unknown event type, naming it', async () => {
    const response = await call('partnerA', 'POST', endpointsPath, {
      url: receiver.url,
      event_types: ['booking.confirmed', 'booking.teleported'],
    });
    expectContract('createWebhookEndpoint', response);
    await refused(response, 'event_types[1]', /must be one of/);
  });

  it('refuses an empty list of event types', async () => {
    const response = await call('partnerA', 'POST', endpointsPath, { url: receiver.url, event_types: [] });
    await refused(response, 'event_types', /at least 1/);
  });

  it('refuses an overlap outside 0 to 7 days', async () => {
    const { id } = await createEndpoint('partnerA');
    for (const overlap of [-1, 604_801, 1.5]) {
      const response = await call('partnerA', 'POST', `${endpointsPath}/${id}/rotate-secret`, {
        overlap_seconds: overlap,
      });
      expectContract('rotateWebhookSecret', response);
      await refused(response, 'overlap_seconds', /./);
    }
  });

  it('refuses an endpoint beyond the cap, saying so', async () => {
    const caller: Caller = 'agent';
    const live = (await database('webhook_endpoints')
      .where({ partner_id: partyIds.agent })
      .whereNull('deleted_at')
      .count<{ count: string }[]>({ count: '*' })
      .first())!;
    for (let made = Number(live.count); made < maximumEndpointsPerPartner; made += 1) {
      await createEndpoint(caller);
    }
    const response = await call(caller, 'POST', endpointsPath, {
      url: receiver.url,
      event_types: ['booking.confirmed'],
    });
    expectContract('createWebhookEndpoint', response);
    expect(response.status).toBe(400);
    expect((response.body as { errors: { message: string }[] }).errors[0].message).toBe(
      `a partner may have at most ${maximumEndpointsPerPartner} webhook endpoints; delete one first`,
    );
    // Another partner is not held back by it.
    await createEndpoint('partnerB');
  });
});

describe('another partner’s endpoints and deliveries', () => {
  let endpointId: string;
  let deliveryId: string;
  let ownEndpointId: string;

  beforeAll(async () => {
    endpointId = (await createEndpoint('partnerA')).id;
    deliveryId = (await insertDelivery(database, { endpointId, status: 'failed' })).deliveryId;
    ownEndpointId = (await createEndpoint('partnerB')).id;
  });

  // Every row names its body, none included: jest reads a test function with more parameters than the row has
  // values as one that takes a done callback.
  const operations: [string, string, (endpoint: string, delivery: string) => string, unknown][] = [
    ['read', 'GET', (endpoint) => `${endpointsPath}/${endpoint}`, undefined],
    ['change', 'PATCH', (endpoint) => `${endpointsPath}/${endpoint}`, { enabled: false }],
    ['delete', 'DELETE', (endpoint) => `${endpointsPath}/${endpoint}`, undefined],
    ['rotate', 'POST', (endpoint) => `${endpointsPath}/${endpoint}/rotate-secret`, { overlap_seconds: 0 }],
    ['ping', 'POST', (endpoint) => `${endpointsPath}/${endpoint}/ping`, undefined],
    ['list deliveries of', 'GET', (endpoint) => `${endpointsPath}/${endpoint}/deliveries`, undefined],
    [
      'read a delivery of',
      'GET',
      (endpoint, delivery) => `${endpointsPath}/${endpoint}/deliveries/${delivery}`,
      undefined,
    ],
    [
      'redeliver a delivery of',
      'POST',
      (endpoint, delivery) => `${endpointsPath}/${endpoint}/deliveries/${delivery}/redeliver`,
      undefined,
    ],
  ];

  function notFoundShape(response: ObservedResponse, missingId: string) {
    const body = response.body as Json;
    return {
      status: response.status,
      code: body.code,
      title: body.title,
      type: body.type,
      detail: typeof body.detail === 'string' ? body.detail.replace(missingId, '<id>') : body.detail,
    };
  }

  it.each(operations)(
    'partner B cannot %s partner A’s endpoint: 404 exactly as for a missing one',
    async (_name, method, pathOf, body) => {
      const receivedBefore = receiver.received.length;
      const missingEndpoint = randomUUID();
      const foreign = await call('partnerB', method, pathOf(endpointId, deliveryId), body);
      const missing = await call('partnerB', method, pathOf(missingEndpoint, deliveryId), body);
      expect(foreign.status).toBe(404);
      expect(notFoundShape(foreign, endpointId)).toEqual(notFoundShape(missing, missingEndpoint));
      expect(foreign.body.detail).toBe(`Webhook endpoint ${endpointId} was not found`);
      // An agent is no operator: staff reach no partner's endpoint either.
      const agent = await call('agent', method, pathOf(endpointId, deliveryId), body);
      expect(notFoundShape(agent, endpointId)).toEqual(notFoundShape(missing, missingEndpoint));
      expect(receiver.received.length).toBe(receivedBefore);
    },
  );

  it('partner B cannot reach partner A’s delivery through an endpoint of its own either', async () => {
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/redeliver'],
    ] as const) {
      const path = (delivery: string) => `${endpointsPath}/${ownEndpointId}/deliveries/${delivery}${suffix}`;
      const foreign = await call('partnerB', method, path(deliveryId));
      const missing = await call('partnerB', method, path(randomUUID()));
      expect(foreign.status).toBe(404);
      expect(foreign.body.detail).toBe(`Webhook delivery ${deliveryId} was not found`);
      expect(missing.status).toBe(404);
    }
  });

  it('left partner A’s endpoint and delivery untouched, and never lists them to partner B', async () => {
    const read = await call('partnerA', 'GET', `${endpointsPath}/${endpointId}`);
    expect(read.body).toMatchObject({
      status: 'ENABLED',
      previous_secret_expires_at: null,
      deleted_at: null,
    });
    const delivery = await call('partnerA', 'GET', `${endpointsPath}/${endpointId}/deliveries/${deliveryId}`);
    expect(delivery.body.status).toBe('FAILED');
    const listed = await call('partnerB', 'GET', `${endpointsPath}?page_size=100`);
    expect((listed.body.endpoints as Json[]).map((endpoint) => endpoint.id)).not.toContain(endpointId);
  });

  it('an admin reads partner A’s endpoint and its deliveries, for operators', async () => {
    expect((await call('admin', 'GET', `${endpointsPath}/${endpointId}`)).status).toBe(200);
    const delivery = await call('admin', 'GET', `${endpointsPath}/${endpointId}/deliveries/${deliveryId}`);
    expect(delivery.status).toBe(200);
  });
});

describe('a caller without webhooks:manage', () => {
  it('is refused every operation with 403 insufficient_scope', async () => {
    const { id } = await createEndpoint('partnerA');
    for (const [method, path] of [
      ['POST', endpointsPath],
      ['GET', endpointsPath],
      ['GET', `${endpointsPath}/${id}`],
      ['POST', `${endpointsPath}/${id}/ping`],
      ['GET', `${endpointsPath}/${id}/deliveries`],
    ] as const) {
      const response = await call(
        'noScope',
        method,
        path,
        method === 'POST' && path === endpointsPath
          ? { url: receiver.url, event_types: ['booking.confirmed'] }
          : undefined,
      );
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('PERMISSION_DENIED');
      expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
      expect(response.headers['www-authenticate']).toContain('webhooks:manage');
    }
  });
});
