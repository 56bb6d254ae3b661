// Unit tests: partner webhook views, their REST JSON and gRPC messages, and the two fronts agreeing field for field.
import {
  deliveryStatusFilter,
  toPingResponse,
  toWebhookDeliveryMessage,
  toWebhookEndpointMessage,
} from '../../../src/api/grpc/webhook-service';
import {
  rotateSecretInput,
  webhookDeliveryJson,
  webhookEndpointChangesInput,
  webhookEndpointInput,
  webhookEndpointJson,
  webhookPingJson,
} from '../../../src/api/rest/webhook-mapping';
import {
  deliveryView,
  endpointAccessOf,
  endpointView,
  newEndpointSecret,
  pingView,
} from '../../../src/application/partner-webhooks';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../../src/db/webhook-endpoints';
import {
  WebhookDeliveryStatus,
  WebhookEndpointScope,
  WebhookEndpointStatus,
  WebhookPingOutcome,
} from '../../../src/generated/com/example/bookings/v1/webhook_service';

const endpointRecord: WebhookEndpointRecord = {
  id: '5d6e7f80-1a2b-4c3d-8e4f-5a6b7c8d9e0f',
  partnerId: 'partner-7',
  url: 'https://partner.example/hooks',
  description: 'Production',
  eventTypes: ['booking.confirmed', 'booking.cancelled'],
  allBookings: false,
  status: 'disabled',
  disabledReason: 'the endpoint answered 410 Gone',
  disabledAt: '2026-11-29T09:00:00.000Z',
  previousSecretExpiresAt: '2026-11-30T08:00:00.000Z',
  createdAt: '2026-11-29T08:00:00.000Z',
  updatedAt: '2026-11-29T09:00:00.000Z',
  deletedAt: null,
};

const deliveryRecord: WebhookDeliveryRecord = {
  id: '6e7f8091-2b3c-4d4e-9f50-6b7c8d9e0f1a',
  endpointId: endpointRecord.id,
  eventId: '7f8091a2-3c4d-4e5f-8a61-7c8d9e0f1a2b',
  eventType: 'booking.confirmed',
  subjectType: 'booking',
  subjectId: '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e',
  sequence: 2,
  status: 'pending',
  attemptCount: 2,
  lastStatusCode: null,
  lastError: 'connect ECONNREFUSED',
  nextAttemptAt: '2026-11-29T08:05:00.000Z',
  deliveredAt: null,
  createdAt: '2026-11-29T08:00:00.000Z',
  updatedAt: '2026-11-29T08:00:05.000Z',
  attempts: [
    {
      attempt: 1,
      attemptedAt: '2026-11-29T08:00:00.000Z',
      statusCode: 503,
      error: 'HTTP 503',
      durationMs: 120,
    },
    {
      attempt: 2,
      attemptedAt: '2026-11-29T08:00:05.000Z',
      statusCode: null,
      error: 'connect ECONNREFUSED',
      durationMs: 3,
    },
  ],
};

describe('endpoint views', () => {
  it('say whose bookings an endpoint hears and its status in the contract’s words, and never a secret', () => {
    const view = endpointView(endpointRecord);
    expect(view).toMatchObject({ scope: 'OWN_BOOKINGS', status: 'DISABLED' });
    expect(endpointView({ ...endpointRecord, allBookings: true, status: 'enabled' })).toMatchObject({
      scope: 'ALL_BOOKINGS',
      status: 'ENABLED',
    });
    expect(JSON.stringify(webhookEndpointJson(view))).not.toMatch(/secret"/);
  });

  it('are the same endpoint on both fronts', () => {
    const view = endpointView(endpointRecord);
    const message = toWebhookEndpointMessage(view);
    expect(message.scope).toBe(WebhookEndpointScope.WEBHOOK_ENDPOINT_SCOPE_OWN_BOOKINGS);
    expect(message.status).toBe(WebhookEndpointStatus.WEBHOOK_ENDPOINT_STATUS_DISABLED);
    expect({
      ...message,
      scope: 'OWN_BOOKINGS',
      status: 'DISABLED',
      disabledAt: message.disabledAt?.toISOString(),
      previousSecretExpiresAt: message.previousSecretExpiresAt?.toISOString(),
      createdAt: message.createdAt?.toISOString(),
      updatedAt: message.updatedAt?.toISOString(),
      deletedAt: message.deletedAt ?? null,
    }).toEqual({
      id: view.id,
      partnerId: view.partnerId,
      url: view.url,
      description: view.description,
      eventTypes: view.eventTypes,
      scope: view.scope,
      status: view.status,
      disabledReason: view.disabledReason,
      disabledAt: view.disabledAt,
      previousSecretExpiresAt: view.previousSecretExpiresAt,
      createdAt: view.createdAt,
      updatedAt: view.updatedAt,
      deletedAt: null,
    });
    expect(webhookEndpointJson(view)).toEqual({
      id: view.id,
      partner_id: 'partner-7',
      url: view.url,
      description: 'Production',
      event_types: ['booking.confirmed', 'booking.cancelled'],
      scope: 'OWN_BOOKINGS',
      status: 'DISABLED',
      disabled_reason: 'the endpoint answered 410 Gone',
      disabled_at: '2026-11-29T09:00:00.000Z',
      previous_secret_expires_at: '2026-11-30T08:00:00.000Z',
      created_at: '2026-11-29T08:00:00.000Z',
      updated_at: '2026-11-29T09:00:00.000Z',
      deleted_at: null,
    });
  });

  it('leave what proto3 cannot say unset, rather than empty', () => {
    const message = toWebhookEndpointMessage(
      endpointView({
        ...endpointRecord,
        disabledReason: null,
        disabledAt: null,
        previousSecretExpiresAt: null,
      }),
    );
    expect(message.disabledReason).toBeUndefined();
    expect(message.disabledAt).toBeUndefined();
    expect(message.previousSecretExpiresAt).toBeUndefined();
  });
});

describe('delivery views', () => {
  it('are the same delivery on both fronts, attempts oldest first', () => {
    const view = deliveryView(deliveryRecord);
    expect(view.status).toBe('PENDING');
    const json = webhookDeliveryJson(view);
    expect(json).toMatchObject({
      status: 'PENDING',
      attempt_count: 2,
      last_status_code: null,
      last_error: 'connect ECONNREFUSED',
      attempts: [
        { attempt: 1, status_code: 503, error: 'HTTP 503', duration_ms: 120 },
        { attempt: 2, status_code: null, error: 'connect ECONNREFUSED', duration_ms: 3 },
      ],
    });
    const message = toWebhookDeliveryMessage(view);
    expect(message.status).toBe(WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_PENDING);
    expect(message.lastStatusCode).toBeUndefined();
    expect(message.attempts.map((attempt) => [attempt.attempt, attempt.statusCode, attempt.error])).toEqual([
      [1, 503, 'HTTP 503'],
      [2, undefined, 'connect ECONNREFUSED'],
    ]);
    expect(message.nextAttemptAt?.toISOString()).toBe(json.next_attempt_at);
    expect(message.deliveredAt).toBeUndefined();
  });

  it('read a gRPC status filter: unspecified is every status, an unknown number is refused', () => {
    expect(deliveryStatusFilter(WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_UNSPECIFIED)).toBeUndefined();
    expect(deliveryStatusFilter(WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_FAILED)).toBe('FAILED');
    expect(deliveryStatusFilter(42 as WebhookDeliveryStatus)).toBeNull();
  });
});

describe('ping outcomes', () => {
  it('carry the sender’s result to both fronts', () => {
    const delivered = pingView({ outcome: 'delivered', statusCode: 204, durationMs: 12 });
    expect(delivered).toEqual({ outcome: 'DELIVERED', statusCode: 204, error: null, durationMs: 12 });
    expect(webhookPingJson(delivered)).toEqual({
      outcome: 'DELIVERED',
      status_code: 204,
      error: null,
      duration_ms: 12,
    });
    const refused = pingView({ outcome: 'refused', error: 'loopback address', durationMs: 0 });
    expect(refused).toEqual({
      outcome: 'REFUSED',
      statusCode: null,
      error: 'loopback address',
      durationMs: 0,
    });
    expect(toPingResponse(refused)).toEqual({
      outcome: WebhookPingOutcome.WEBHOOK_PING_OUTCOME_REFUSED,
      error: 'loopback address',
      durationMs: 0,
    });
    expect(pingView({ outcome: 'failed', error: 'timeout', durationMs: 10_000 }).statusCode).toBeNull();
    expect(pingView({ outcome: 'gone', statusCode: 410, durationMs: 5 }).outcome).toBe('GONE');
  });
});

describe('requests', () => {
  it('hand the application exactly the fields given, unchecked', () => {
    expect(webhookEndpointInput({ url: 'https://x.example', event_types: ['booking.confirmed'] })).toEqual({
      url: 'https://x.example',
      eventTypes: ['booking.confirmed'],
      description: undefined,
    });
    expect(webhookEndpointChangesInput({ enabled: false })).toEqual({
      url: undefined,
      eventTypes: undefined,
      description: undefined,
      enabled: false,
    });
    expect(rotateSecretInput(undefined)).toEqual({});
    expect(rotateSecretInput({ overlap_seconds: 0 })).toEqual({ overlapSeconds: 0 });
  });
});

describe('secrets and access', () => {
  it('makes a fresh whsec_ secret of 24 random bytes each time', () => {
    const secrets = new Set(Array.from({ length: 50 }, newEndpointSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
    }
  });

  it('lets an admin reach every partner’s endpoints, and anyone else (agents too) only their own', () => {
    expect(endpointAccessOf({ userId: 'a', roles: ['admin'], scopes: [] })).toEqual({ anyPartner: true });
    expect(endpointAccessOf({ userId: 'b', roles: ['agent'], scopes: [] })).toEqual({ partnerId: 'b' });
    expect(endpointAccessOf({ userId: 'c', roles: [], scopes: [] })).toEqual({ partnerId: 'c' });
  });
});
