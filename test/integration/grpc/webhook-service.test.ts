// WebhookService over mutual TLS against the real application and PostgreSQL: the same rules as REST, gRPC's words.
import { randomUUID } from 'node:crypto';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import type { Knex } from 'knex';
import { BookingServiceCallError } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import {
  createPartnerWebhookApplication,
  maximumEndpointsPerPartner,
} from '../../../src/application/partner-webhooks';
import { readEndpointForDelivery } from '../../../src/db/webhook-endpoints';
import type { Actor } from '../../../src/domain/actor';
import { unauthenticated } from '../../../src/domain/errors';
import {
  WebhookDeliveryStatus,
  WebhookEndpointScope,
  WebhookEndpointStatus,
  WebhookPingOutcome,
  WebhookServiceClient,
  type CreateWebhookEndpointRequest,
  type CreateWebhookEndpointResponse,
  type DeleteWebhookEndpointRequest,
  type DeleteWebhookEndpointResponse,
  type GetWebhookDeliveryRequest,
  type GetWebhookDeliveryResponse,
  type GetWebhookEndpointRequest,
  type GetWebhookEndpointResponse,
  type ListWebhookDeliveriesRequest,
  type ListWebhookDeliveriesResponse,
  type ListWebhookEndpointsRequest,
  type ListWebhookEndpointsResponse,
  type PingWebhookEndpointRequest,
  type PingWebhookEndpointResponse,
  type RedeliverWebhookDeliveryRequest,
  type RedeliverWebhookDeliveryResponse,
  type RotateWebhookSecretRequest,
  type RotateWebhookSecretResponse,
  type UpdateWebhookEndpointRequest,
  type UpdateWebhookEndpointResponse,
} from '../../../src/generated/com/example/bookings/v1/webhook_service';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { openTestDatabase, testCipher } from '../../support/database';
import {
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';
import {
  insertDelivery,
  loopbackWebhookSender,
  startWebhookReceiver,
  verifiedWith,
  type WebhookReceiver,
} from '../../support/webhook-endpoint-fixtures';

type Caller = 'partnerA' | 'partnerB' | 'agent' | 'admin' | 'noScope';

const actors: Record<Caller, Actor> = {
  partnerA: { userId: randomUUID(), roles: [], scopes: ['webhooks:manage'] },
  partnerB: { userId: randomUUID(), roles: [], scopes: ['webhooks:manage'] },
  agent: { userId: randomUUID(), roles: ['agent'], scopes: ['webhooks:manage'] },
  admin: { userId: randomUUID(), roles: ['admin'], scopes: ['webhooks:manage'] },
  noScope: { userId: randomUUID(), roles: [], scopes: ['bookings:read'] },
};

let database: Knex;
let cipher: FieldCipher;
let certificates: TestCertificates;
let server: RunningGrpcServer;
let strictServer: RunningGrpcServer;
let receiver: WebhookReceiver;
let client: WebhookServiceClient;
let strictClient: WebhookServiceClient;
const nudges: { endpointId: string; subjectId: string }[] = [];

function clientOf(running: RunningGrpcServer): WebhookServiceClient {
  return new WebhookServiceClient(
    `127.0.0.1:${running.port}`,
    credentials.createSsl(certificates.ca, certificates.allowedClient.key, certificates.allowedClient.cert),
  );
}

beforeAll(async () => {
  database = openTestDatabase({ applicationName: 'webhook-service-tests' });
  cipher = testCipher();
  certificates = createTestCertificates();
  receiver = await startWebhookReceiver();
  const verifyAccessToken = (token: string) => {
    const actor = (actors as Record<string, Actor>)[token];
    return actor ? Promise.resolve(actor) : Promise.reject(unauthenticated('The token is not valid'));
  };
  // The receiver listens on loopback over http: allowed here, and the test's sender has no outbound guard.
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
  server = await startTestServer({ certificates, webhooks, verifyAccessToken });
  strictServer = await startTestServer({
    certificates,
    verifyAccessToken,
    webhooks: createPartnerWebhookApplication({
      database,
      cipher,
      sender: loopbackWebhookSender(),
      deliveries: { nudge: () => Promise.reject(new Error('no delivery is woken in these tests')) },
      allowHttp: false,
    }),
  });
  client = clientOf(server);
  strictClient = clientOf(strictServer);
});

afterAll(async () => {
  client?.close();
  strictClient?.close();
  await server?.stop();
  await strictServer?.stop();
  await receiver?.close();
  if (certificates !== undefined) removeTestCertificates(certificates);
  if (database !== undefined) {
    const partners = Object.values(actors).map((actor) => actor.userId);
    const endpoints = await database('webhook_endpoints').whereIn('partner_id', partners).pluck('id');
    const eventIds = await database('webhook_deliveries').whereIn('endpoint_id', endpoints).pluck('event_id');
    const deliveries = await database('webhook_deliveries').whereIn('endpoint_id', endpoints).pluck('id');
    await database('webhook_attempts').whereIn('delivery_id', deliveries).delete();
    await database('webhook_deliveries').whereIn('id', deliveries).delete();
    await database('partner_events').whereIn('id', eventIds).delete();
    await database('webhook_endpoints').whereIn('id', endpoints).delete();
    await database.destroy();
  }
});

type Callback<Response> = (error: ServiceError | null, response: Response) => void;

/** One RPC as a promise, called as `caller` (its token in `authorization`); a failure is decoded. */
function rpc<Request, Response>(name: keyof WebhookServiceClient) {
  return (caller: Caller, request: Request, on: WebhookServiceClient = client): Promise<Response> => {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${caller}`);
    const methods = on as unknown as Record<
      string,
      (request: Request, metadata: Metadata, callback: Callback<Response>) => unknown
    >;
    return new Promise((resolve, reject) => {
      methods[name](request, metadata, (error, response) =>
        error ? reject(new BookingServiceCallError(error)) : resolve(response),
      );
    });
  };
}

const webhookService = {
  createWebhookEndpoint: rpc<CreateWebhookEndpointRequest, CreateWebhookEndpointResponse>(
    'createWebhookEndpoint',
  ),
  listWebhookEndpoints: rpc<ListWebhookEndpointsRequest, ListWebhookEndpointsResponse>(
    'listWebhookEndpoints',
  ),
  getWebhookEndpoint: rpc<GetWebhookEndpointRequest, GetWebhookEndpointResponse>('getWebhookEndpoint'),
  updateWebhookEndpoint: rpc<UpdateWebhookEndpointRequest, UpdateWebhookEndpointResponse>(
    'updateWebhookEndpoint',
  ),
  deleteWebhookEndpoint: rpc<DeleteWebhookEndpointRequest, DeleteWebhookEndpointResponse>(
    'deleteWebhookEndpoint',
  ),
  rotateWebhookSecret: rpc<RotateWebhookSecretRequest, RotateWebhookSecretResponse>('rotateWebhookSecret'),
  pingWebhookEndpoint: rpc<PingWebhookEndpointRequest, PingWebhookEndpointResponse>('pingWebhookEndpoint'),
  listWebhookDeliveries: rpc<ListWebhookDeliveriesRequest, ListWebhookDeliveriesResponse>(
    'listWebhookDeliveries',
  ),
  getWebhookDelivery: rpc<GetWebhookDeliveryRequest, GetWebhookDeliveryResponse>('getWebhookDelivery'),
  redeliverWebhookDelivery: rpc<RedeliverWebhookDeliveryRequest, RedeliverWebhookDeliveryResponse>(
    'redeliverWebhookDelivery',
  ),
};

async function failureOf(work: Promise<unknown>): Promise<BookingServiceCallError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof BookingServiceCallError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

const create = (
  caller: Caller,
  request: { url?: string; eventTypes?: string[]; description?: string } = {},
) =>
  webhookService.createWebhookEndpoint(caller, {
    url: request.url ?? receiver.url,
    eventTypes: request.eventTypes ?? ['booking.confirmed'],
    description: request.description ?? '',
  });

describe('WebhookService endpoints', () => {
  it('creates an endpoint, answering its secret once and never again', async () => {
    const created = await create('partnerA', {
      eventTypes: ['booking.cancelled', 'booking.confirmed'],
      description: 'gRPC receiver',
    });
    const endpoint = created.endpoint!;
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(endpoint).toMatchObject({
      partnerId: actors.partnerA.userId,
      url: receiver.url,
      description: 'gRPC receiver',
      eventTypes: ['booking.confirmed', 'booking.cancelled'],
      scope: WebhookEndpointScope.WEBHOOK_ENDPOINT_SCOPE_OWN_BOOKINGS,
      status: WebhookEndpointStatus.WEBHOOK_ENDPOINT_STATUS_ENABLED,
    });
    expect(endpoint.deletedAt).toBeUndefined();
    const read = await webhookService.getWebhookEndpoint('partnerA', { endpointId: endpoint.id });
    expect(read.endpoint).toEqual(endpoint);
    const listed = await webhookService.listWebhookEndpoints('partnerA', { pageSize: 100, pageToken: '' });
    expect(listed.endpoints.map((item) => item.id)).toContain(endpoint.id);
    expect(JSON.stringify([read, listed])).not.toContain(created.secret);
    expect((await create('agent')).endpoint!.scope).toBe(
      WebhookEndpointScope.WEBHOOK_ENDPOINT_SCOPE_ALL_BOOKINGS,
    );
  });

  it('changes the fields set, disables, and on enable wakes each booking with deliveries waiting', async () => {
    const { endpoint } = await create('partnerA');
    const id = endpoint!.id;
    const waiting = await insertDelivery(database, { endpointId: id, status: 'pending' });
    const changed = await webhookService.updateWebhookEndpoint('partnerA', {
      endpointId: id,
      eventTypes: ['payment.refunded'],
      description: 'renamed',
      enabled: false,
    });
    expect(changed.endpoint).toMatchObject({
      url: receiver.url,
      eventTypes: ['payment.refunded'],
      description: 'renamed',
      status: WebhookEndpointStatus.WEBHOOK_ENDPOINT_STATUS_DISABLED,
      disabledReason: 'disabled by request',
    });
    // An empty list leaves the event types: an endpoint always has one.
    const enabled = await webhookService.updateWebhookEndpoint('partnerA', {
      endpointId: id,
      eventTypes: [],
      enabled: true,
    });
    expect(enabled.endpoint).toMatchObject({
      eventTypes: ['payment.refunded'],
      status: WebhookEndpointStatus.WEBHOOK_ENDPOINT_STATUS_ENABLED,
    });
    expect(enabled.endpoint!.disabledReason).toBeUndefined();
    expect(nudges.filter((nudge) => nudge.endpointId === id)).toEqual([
      { endpointId: id, subjectId: waiting.subjectId },
    ]);
  });

  it('deletes an endpoint: NOT_FOUND for its partner afterwards', async () => {
    const { endpoint } = await create('partnerA');
    await webhookService.deleteWebhookEndpoint('partnerA', { endpointId: endpoint!.id });
    const failure = await failureOf(
      webhookService.getWebhookEndpoint('partnerA', { endpointId: endpoint!.id }),
    );
    expect(failure.code).toBe(status.NOT_FOUND);
    expect(failure.reason).toBe('NOT_FOUND');
  });

  it('rotates the secret with the overlap asked for, or a day', async () => {
    const { endpoint, secret: first } = await create('partnerA');
    const id = endpoint!.id;
    const hour = await webhookService.rotateWebhookSecret('partnerA', {
      endpointId: id,
      overlapSeconds: 3600,
    });
    expect(hour.secret).not.toBe(first);
    const ends = hour.endpoint!.previousSecretExpiresAt!.getTime();
    expect(Math.abs(ends - (Date.now() + 3_600_000))).toBeLessThan(60_000);
    expect((await readEndpointForDelivery(database, cipher, id, new Date()))?.secrets).toEqual([
      hour.secret,
      first,
    ]);

    const day = await webhookService.rotateWebhookSecret('partnerA', { endpointId: id });
    const dayEnds = day.endpoint!.previousSecretExpiresAt!.getTime();
    expect(Math.abs(dayEnds - (Date.now() + 86_400_000))).toBeLessThan(60_000);

    const none = await webhookService.rotateWebhookSecret('partnerA', {
      endpointId: id,
      overlapSeconds: 0,
    });
    expect(none.endpoint!.previousSecretExpiresAt).toBeUndefined();
    expect((await readEndpointForDelivery(database, cipher, id, new Date()))?.secrets).toEqual([none.secret]);
  });

  it('pings the endpoint with a signed webhook.ping and answers the outcome', async () => {
    const { endpoint, secret } = await create('partnerA');
    const before = receiver.received.length;
    const ping = await webhookService.pingWebhookEndpoint('partnerA', { endpointId: endpoint!.id });
    expect(ping).toMatchObject({
      outcome: WebhookPingOutcome.WEBHOOK_PING_OUTCOME_DELIVERED,
      statusCode: 200,
    });
    expect(ping.error).toBeUndefined();
    expect(verifiedWith(secret, receiver.received[before])).toMatchObject({
      type: 'webhook.ping',
      data: { endpoint_id: endpoint!.id },
    });
  });

  it('lists, filters and reads deliveries, and redelivers one', async () => {
    const { endpoint } = await create('partnerA');
    const id = endpoint!.id;
    const delivered = await insertDelivery(database, {
      endpointId: id,
      status: 'delivered',
      attempts: [{ statusCode: 204, error: null, durationMs: 9 }],
      createdAt: new Date(Date.now() - 60_000),
    });
    const failed = await insertDelivery(database, {
      endpointId: id,
      status: 'failed',
      attempts: [{ statusCode: null, error: 'timeout', durationMs: 10_000 }],
    });
    const log = await webhookService.listWebhookDeliveries('partnerA', {
      endpointId: id,
      status: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_UNSPECIFIED,
      pageSize: 0,
      pageToken: '',
    });
    expect(log.deliveries.map((delivery) => delivery.id)).toEqual([failed.deliveryId, delivered.deliveryId]);
    expect(log.nextPageToken).toBe('');
    expect(log.deliveries[1].attempts).toEqual([
      { attempt: 1, attemptedAt: expect.any(Date) as Date, statusCode: 204, durationMs: 9 },
    ]);
    const onlyFailed = await webhookService.listWebhookDeliveries('partnerA', {
      endpointId: id,
      status: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_FAILED,
      pageSize: 0,
      pageToken: '',
    });
    expect(onlyFailed.deliveries.map((delivery) => delivery.id)).toEqual([failed.deliveryId]);
    const one = await webhookService.getWebhookDelivery('partnerA', {
      endpointId: id,
      deliveryId: failed.deliveryId,
    });
    expect(one.delivery).toMatchObject({
      status: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_FAILED,
      lastError: 'timeout',
    });
    const again = await webhookService.redeliverWebhookDelivery('partnerA', {
      endpointId: id,
      deliveryId: failed.deliveryId,
    });
    expect(again.delivery?.status).toBe(WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_PENDING);
    expect(nudges).toContainEqual({ endpointId: id, subjectId: failed.subjectId });
  });
});

describe('WebhookService bad requests', () => {
  async function invalid(work: Promise<unknown>, field: string, message: RegExp): Promise<void> {
    const failure = await failureOf(work);
    expect(failure.code).toBe(status.INVALID_ARGUMENT);
    expect(failure.reason).toBe('VALIDATION_FAILED');
    expect(failure.fieldViolations.map((violation) => violation.field)).toEqual([field]);
    expect(failure.fieldViolations[0].description).toMatch(message);
  }

  it('refuses a plain http URL where https is required', async () => {
    await invalid(
      webhookService.createWebhookEndpoint(
        'partnerA',
        { url: 'http://partner.example/hooks', eventTypes: ['booking.confirmed'], description: '' },
        strictClient,
      ),
      'url',
      /must be an https URL/,
    );
  });

  it('refuses an unknown event type, naming the known ones', async () => {
    await invalid(
      create('partnerA', { eventTypes: ['booking.confirmed', 'booking.teleported'] }),
      'event_types',
      /unknown event type\(s\) booking\.teleported; known: booking\.confirmed/,
    );
  });

  it('refuses an empty list of event types', async () => {
    await invalid(create('partnerA', { eventTypes: [] }), 'event_types', /must list at least one event type/);
  });

  it('refuses an overlap outside 0 to 7 days', async () => {
    const { endpoint } = await create('partnerA');
    for (const overlapSeconds of [-1, 604_801]) {
      await invalid(
        webhookService.rotateWebhookSecret('partnerA', { endpointId: endpoint!.id, overlapSeconds }),
        'overlap_seconds',
        /from 0 to 604800/,
      );
    }
  });

  it('refuses an endpoint id that is not a UUID', async () => {
    await invalid(
      webhookService.getWebhookEndpoint('partnerA', { endpointId: 'not-an-id' }),
      'endpoint_id',
      /./,
    );
  });

  it('refuses an endpoint beyond the cap, saying so', async () => {
    const caller: Caller = 'partnerB';
    const live = await webhookService.listWebhookEndpoints(caller, { pageSize: 100, pageToken: '' });
    for (let made = live.endpoints.length; made < maximumEndpointsPerPartner; made += 1) await create(caller);
    const failure = await failureOf(create(caller));
    expect(failure.code).toBe(status.INVALID_ARGUMENT);
    expect(failure.fieldViolations.map((violation) => violation.description)).toEqual([
      `a partner may have at most ${maximumEndpointsPerPartner} webhook endpoints; delete one first`,
    ]);
  });
});

describe('another partner’s endpoints over gRPC', () => {
  let endpointId: string;
  let deliveryId: string;

  beforeAll(async () => {
    endpointId = (await create('partnerA')).endpoint!.id;
    deliveryId = (await insertDelivery(database, { endpointId, status: 'failed' })).deliveryId;
  });

  const calls: [string, (caller: Caller, endpoint: string, delivery: string) => Promise<unknown>][] = [
    [
      'GetWebhookEndpoint',
      (caller, endpoint) => webhookService.getWebhookEndpoint(caller, { endpointId: endpoint }),
    ],
    [
      'UpdateWebhookEndpoint',
      (caller, endpoint) =>
        webhookService.updateWebhookEndpoint(caller, {
          endpointId: endpoint,
          eventTypes: [],
          enabled: false,
        }),
    ],
    [
      'DeleteWebhookEndpoint',
      (caller, endpoint) => webhookService.deleteWebhookEndpoint(caller, { endpointId: endpoint }),
    ],
    [
      'RotateWebhookSecret',
      (caller, endpoint) => webhookService.rotateWebhookSecret(caller, { endpointId: endpoint }),
    ],
    [
      'PingWebhookEndpoint',
      (caller, endpoint) => webhookService.pingWebhookEndpoint(caller, { endpointId: endpoint }),
    ],
    [
      'ListWebhookDeliveries',
      (caller, endpoint) =>
        webhookService.listWebhookDeliveries(caller, {
          endpointId: endpoint,
          status: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_UNSPECIFIED,
          pageSize: 0,
          pageToken: '',
        }),
    ],
    [
      'GetWebhookDelivery',
      (caller, endpoint, delivery) =>
        webhookService.getWebhookDelivery(caller, { endpointId: endpoint, deliveryId: delivery }),
    ],
    [
      'RedeliverWebhookDelivery',
      (caller, endpoint, delivery) =>
        webhookService.redeliverWebhookDelivery(caller, { endpointId: endpoint, deliveryId: delivery }),
    ],
  ];

  const shapeOf = (failure: BookingServiceCallError, id: string) => ({
    code: failure.code,
    reason: failure.reason,
    message: failure.message.replace(id, '<id>'),
    fieldViolations: failure.fieldViolations,
  });

  it.each(calls)(
    '%s of partner A’s endpoint answers partner B NOT_FOUND exactly as a missing one',
    async (_name, run) => {
      const receivedBefore = receiver.received.length;
      const missingId = randomUUID();
      const foreign = await failureOf(run('partnerB', endpointId, deliveryId));
      const missing = await failureOf(run('partnerB', missingId, deliveryId));
      expect(foreign.code).toBe(status.NOT_FOUND);
      expect(foreign.message).toBe(`Webhook endpoint ${endpointId} was not found`);
      expect(shapeOf(foreign, endpointId)).toEqual(shapeOf(missing, missingId));
      const agent = await failureOf(run('agent', endpointId, deliveryId));
      expect(shapeOf(agent, endpointId)).toEqual(shapeOf(missing, missingId));
      expect(receiver.received.length).toBe(receivedBefore);
    },
  );

  it('left partner A’s endpoint as it was, and an admin reads it', async () => {
    const read = await webhookService.getWebhookEndpoint('partnerA', { endpointId });
    expect(read.endpoint?.status).toBe(WebhookEndpointStatus.WEBHOOK_ENDPOINT_STATUS_ENABLED);
    expect(read.endpoint?.previousSecretExpiresAt).toBeUndefined();
    const operator = await webhookService.getWebhookDelivery('admin', { endpointId, deliveryId });
    expect(operator.delivery?.status).toBe(WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_FAILED);
  });

  it('refuses a caller without webhooks:manage with PERMISSION_DENIED', async () => {
    for (const work of [
      webhookService.listWebhookEndpoints('noScope', { pageSize: 0, pageToken: '' }),
      webhookService.getWebhookEndpoint('noScope', { endpointId }),
      create('noScope'),
    ]) {
      const failure = await failureOf(work);
      expect(failure.code).toBe(status.PERMISSION_DENIED);
    }
  });
});
