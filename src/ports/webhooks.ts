// The two doors partner webhooks go through: the HTTP call to a partner's endpoint, and waking its delivery workflow.

/** One Standard Webhooks message to one endpoint. */
export interface WebhookRequest {
  url: string;
  /** `webhook-id`: the event's, the same on every attempt and every redelivery. */
  messageId: string;
  /** `webhook-timestamp` is this instant, the attempt's own (the signature covers it). */
  timestamp: Date;
  /** The exact bytes sent and signed. */
  payload: string;
  /** `whsec_…` secrets to sign with: the current one first, and during a rotation's overlap the previous one. */
  secrets: readonly string[];
}

/**
 * How an attempt went. `delivered`: any 2xx. `gone`: 410, the endpoint asks to be disabled. `refused`: the
 * outbound guard would not connect (a loopback, private or metadata address); nothing was sent. `failed`: any
 * other answer, a timeout or a network error; `retryAfterSeconds` when a 429 or 503 said how long to wait.
 */
export type WebhookSendResult =
  | { outcome: 'delivered'; statusCode: number; durationMs: number }
  | { outcome: 'gone'; statusCode: 410; durationMs: number }
  | { outcome: 'refused'; error: string; durationMs: number }
  | { outcome: 'failed'; statusCode?: number; error: string; retryAfterSeconds?: number; durationMs: number };

export interface WebhookSender {
  send(request: WebhookRequest): Promise<WebhookSendResult>;
}

/** Wakes the delivery workflow of one endpoint and one subject (a booking or a trip), starting it if it is idle. */
export interface WebhookDeliveryStarter {
  nudge(target: { endpointId: string; subjectId: string }): Promise<void>;
}
