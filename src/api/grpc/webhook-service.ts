// WebhookService handlers: each maps its request onto one PartnerWebhookApplication call and the result onto its response.
import type { ServerUnaryCall } from '@grpc/grpc-js';
import type {
  DeliveryStatusName,
  PartnerWebhookApplication,
  PingView,
  WebhookDeliveryView,
  WebhookEndpointView,
} from '../../application/partner-webhooks';
import { validationFailed, type DomainError } from '../../domain/errors';
import {
  WebhookDeliveryStatus,
  WebhookEndpointScope,
  WebhookEndpointStatus,
  WebhookPingOutcome,
  WebhookServiceService,
  type PingWebhookEndpointResponse,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookServiceServer,
} from '../../generated/com/example/bookings/v1/webhook_service';
import type { Logger } from '../../logger';
import type { AccessTokenVerifier } from './caller-authorization';
import { given, userUnaryHandlers } from './user-unary';

export interface WebhookServiceDependencies {
  readonly webhooks: PartnerWebhookApplication;
  readonly verifyAccessToken: AccessTokenVerifier;
  readonly logger: Logger;
  readonly serviceIdentityOf: (call: ServerUnaryCall<unknown, unknown>) => string | undefined;
  readonly onCallFailure?: (error: DomainError) => void;
}

const optionalDate = (value: string | null): Date | undefined =>
  value === null ? undefined : new Date(value);

export function toWebhookEndpointMessage(view: WebhookEndpointView): WebhookEndpoint {
  return {
    id: view.id,
    partnerId: view.partnerId,
    url: view.url,
    description: view.description,
    eventTypes: [...view.eventTypes],
    scope:
      view.scope === 'ALL_BOOKINGS'
        ? WebhookEndpointScope.WEBHOOK_ENDPOINT_SCOPE_ALL_BOOKINGS
        : WebhookEndpointScope.WEBHOOK_ENDPOINT_SCOPE_OWN_BOOKINGS,
    status:
      view.status === 'ENABLED'
        ? WebhookEndpointStatus.WEBHOOK_ENDPOINT_STATUS_ENABLED
        : WebhookEndpointStatus.WEBHOOK_ENDPOINT_STATUS_DISABLED,
    ...(view.disabledReason === null ? {} : { disabledReason: view.disabledReason }),
    disabledAt: optionalDate(view.disabledAt),
    previousSecretExpiresAt: optionalDate(view.previousSecretExpiresAt),
    createdAt: new Date(view.createdAt),
    updatedAt: new Date(view.updatedAt),
    deletedAt: optionalDate(view.deletedAt),
  };
}

const deliveryStatuses: Readonly<Record<DeliveryStatusName, WebhookDeliveryStatus>> = {
  PENDING: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_PENDING,
  DELIVERED: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_DELIVERED,
  FAILED: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_FAILED,
};

/** The filter a request names: undefined for UNSPECIFIED (every status), null for a number no value has. */
export function deliveryStatusFilter(value: WebhookDeliveryStatus): DeliveryStatusName | undefined | null {
  if (value === WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_UNSPECIFIED) return undefined;
  const found = Object.entries(deliveryStatuses).find(([, number]) => number === value);
  return found === undefined ? null : (found[0] as DeliveryStatusName);
}

export function toWebhookDeliveryMessage(view: WebhookDeliveryView): WebhookDelivery {
  return {
    id: view.id,
    endpointId: view.endpointId,
    eventId: view.eventId,
    eventType: view.eventType,
    subjectType: view.subjectType,
    subjectId: view.subjectId,
    sequence: view.sequence,
    status: deliveryStatuses[view.status],
    attemptCount: view.attemptCount,
    ...(view.lastStatusCode === null ? {} : { lastStatusCode: view.lastStatusCode }),
    ...(view.lastError === null ? {} : { lastError: view.lastError }),
    nextAttemptAt: optionalDate(view.nextAttemptAt),
    deliveredAt: optionalDate(view.deliveredAt),
    createdAt: new Date(view.createdAt),
    updatedAt: new Date(view.updatedAt),
    attempts: view.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      attemptedAt: new Date(attempt.attemptedAt),
      ...(attempt.statusCode === null ? {} : { statusCode: attempt.statusCode }),
      ...(attempt.error === null ? {} : { error: attempt.error }),
      durationMs: attempt.durationMs,
    })),
  };
}

const pingOutcomes: Readonly<Record<PingView['outcome'], WebhookPingOutcome>> = {
  DELIVERED: WebhookPingOutcome.WEBHOOK_PING_OUTCOME_DELIVERED,
  GONE: WebhookPingOutcome.WEBHOOK_PING_OUTCOME_GONE,
  REFUSED: WebhookPingOutcome.WEBHOOK_PING_OUTCOME_REFUSED,
  FAILED: WebhookPingOutcome.WEBHOOK_PING_OUTCOME_FAILED,
};

export function toPingResponse(view: PingView): PingWebhookEndpointResponse {
  return {
    outcome: pingOutcomes[view.outcome],
    ...(view.statusCode === null ? {} : { statusCode: view.statusCode }),
    ...(view.error === null ? {} : { error: view.error }),
    durationMs: view.durationMs,
  };
}

export function createWebhookServiceHandlers(dependencies: WebhookServiceDependencies): WebhookServiceServer {
  const { webhooks } = dependencies;
  const unary = userUnaryHandlers(dependencies, 'WebhookService');

  return {
    createWebhookEndpoint: unary(WebhookServiceService.createWebhookEndpoint, async (actor, request) => {
      const created = await webhooks.createEndpoint(actor, {
        url: request.url,
        eventTypes: request.eventTypes,
        ...(request.description === '' ? {} : { description: request.description }),
      });
      return { endpoint: toWebhookEndpointMessage(created.endpoint), secret: created.secret };
    }),

    listWebhookEndpoints: unary(WebhookServiceService.listWebhookEndpoints, async (actor, request) => {
      const page = await webhooks.listEndpoints(actor, {
        pageSize: given(request.pageSize),
        pageToken: given(request.pageToken),
      });
      return { endpoints: page.items.map(toWebhookEndpointMessage), nextPageToken: page.nextPageToken ?? '' };
    }),

    getWebhookEndpoint: unary(WebhookServiceService.getWebhookEndpoint, async (actor, request) => ({
      endpoint: toWebhookEndpointMessage(await webhooks.getEndpoint(actor, request.endpointId)),
    })),

    updateWebhookEndpoint: unary(WebhookServiceService.updateWebhookEndpoint, async (actor, request) => {
      // An endpoint always has an event type, so an empty list can only mean "leave them as they are".
      const endpoint = await webhooks.updateEndpoint(actor, request.endpointId, {
        ...(request.url === undefined ? {} : { url: request.url }),
        ...(request.eventTypes.length === 0 ? {} : { eventTypes: request.eventTypes }),
        ...(request.description === undefined ? {} : { description: request.description }),
        ...(request.enabled === undefined ? {} : { enabled: request.enabled }),
      });
      return { endpoint: toWebhookEndpointMessage(endpoint) };
    }),

    deleteWebhookEndpoint: unary(WebhookServiceService.deleteWebhookEndpoint, async (actor, request) => {
      await webhooks.deleteEndpoint(actor, request.endpointId);
      return {};
    }),

    rotateWebhookSecret: unary(WebhookServiceService.rotateWebhookSecret, async (actor, request) => {
      const rotated = await webhooks.rotateSecret(actor, request.endpointId, {
        ...(request.overlapSeconds === undefined ? {} : { overlapSeconds: request.overlapSeconds }),
      });
      return { endpoint: toWebhookEndpointMessage(rotated.endpoint), secret: rotated.secret };
    }),

    pingWebhookEndpoint: unary(WebhookServiceService.pingWebhookEndpoint, async (actor, request) =>
      toPingResponse(await webhooks.pingEndpoint(actor, request.endpointId)),
    ),

    listWebhookDeliveries: unary(WebhookServiceService.listWebhookDeliveries, async (actor, request) => {
      const statusFilter = deliveryStatusFilter(request.status);
      if (statusFilter === null) {
        throw validationFailed([{ field: 'status', message: 'must be a WebhookDeliveryStatus value' }]);
      }
      const page = await webhooks.listDeliveries(actor, request.endpointId, {
        ...(statusFilter === undefined ? {} : { status: statusFilter }),
        pageSize: given(request.pageSize),
        pageToken: given(request.pageToken),
      });
      return {
        deliveries: page.items.map(toWebhookDeliveryMessage),
        nextPageToken: page.nextPageToken ?? '',
      };
    }),

    getWebhookDelivery: unary(WebhookServiceService.getWebhookDelivery, async (actor, request) => ({
      delivery: toWebhookDeliveryMessage(
        await webhooks.getDelivery(actor, request.endpointId, request.deliveryId),
      ),
    })),

    redeliverWebhookDelivery: unary(
      WebhookServiceService.redeliverWebhookDelivery,
      async (actor, request) => ({
        delivery: toWebhookDeliveryMessage(
          await webhooks.redeliver(actor, request.endpointId, request.deliveryId),
        ),
      }),
    ),
  };
}
