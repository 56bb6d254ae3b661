// Maps partner webhook endpoints and deliveries between the REST contract's snake_case JSON and the application's views.
import type {
  EndpointChangesInput,
  EndpointInput,
  EndpointWithSecret,
  PingView,
  WebhookDeliveryView,
  WebhookEndpointView,
} from '../../application/partner-webhooks';

type JsonObject = Record<string, unknown>;

function asObject(value: unknown): JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

export function webhookEndpointJson(view: WebhookEndpointView) {
  return {
    id: view.id,
    partner_id: view.partnerId,
    url: view.url,
    description: view.description,
    event_types: view.eventTypes,
    scope: view.scope,
    status: view.status,
    disabled_reason: view.disabledReason,
    disabled_at: view.disabledAt,
    previous_secret_expires_at: view.previousSecretExpiresAt,
    created_at: view.createdAt,
    updated_at: view.updatedAt,
    deleted_at: view.deletedAt,
  };
}

export function webhookEndpointSecretJson(created: EndpointWithSecret) {
  return { endpoint: webhookEndpointJson(created.endpoint), secret: created.secret };
}

export function webhookDeliveryJson(view: WebhookDeliveryView) {
  return {
    id: view.id,
    endpoint_id: view.endpointId,
    event_id: view.eventId,
    event_type: view.eventType,
    subject_type: view.subjectType,
    subject_id: view.subjectId,
    sequence: view.sequence,
    status: view.status,
    attempt_count: view.attemptCount,
    last_status_code: view.lastStatusCode,
    last_error: view.lastError,
    next_attempt_at: view.nextAttemptAt,
    delivered_at: view.deliveredAt,
    created_at: view.createdAt,
    updated_at: view.updatedAt,
    attempts: view.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      attempted_at: attempt.attemptedAt,
      status_code: attempt.statusCode,
      error: attempt.error,
      duration_ms: attempt.durationMs,
    })),
  };
}

export function webhookPingJson(view: PingView) {
  return {
    outcome: view.outcome,
    status_code: view.statusCode,
    error: view.error,
    duration_ms: view.durationMs,
  };
}

/** Fields left out stay undefined, which the application reads as "not given". */
export function webhookEndpointInput(body: unknown): EndpointInput {
  const fields = asObject(body);
  return { url: fields.url, eventTypes: fields.event_types, description: fields.description };
}

export function webhookEndpointChangesInput(body: unknown): EndpointChangesInput {
  return { ...webhookEndpointInput(body), enabled: asObject(body).enabled };
}

export function rotateSecretInput(body: unknown): { overlapSeconds?: unknown } {
  const overlapSeconds = asObject(body).overlap_seconds;
  return overlapSeconds === undefined ? {} : { overlapSeconds };
}
