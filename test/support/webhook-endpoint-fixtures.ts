// A partner's receiver on a loopback port, a plain sender that reaches it, and delivery rows written as the outbox would (fixtures of the subscription tests).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { Webhook } from 'standardwebhooks';
import type { WebhookSender, WebhookSendResult } from '../../src/ports/webhooks';

export interface ReceivedMessage {
  headers: Record<string, string>;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedMessage[];
  /** The status every later request is answered with (200 until changed). */
  answerWith(status: number): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedMessage[] = [];
  let answer = 200;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers[name] = value;
      }
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answerWith: (status) => {
      answer = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Signs with every secret given (Standard Webhooks' space-separated signatures) and POSTs, with no outbound guard:
 * the service's own sender is another module's; this one reaches the loopback receiver the tests start.
 */
export function loopbackWebhookSender(): WebhookSender {
  return {
    async send(request): Promise<WebhookSendResult> {
      const signatures = request.secrets.map((secret) =>
        new Webhook(secret).sign(request.messageId, request.timestamp, request.payload),
      );
      const startedAt = Date.now();
      try {
        const response = await fetch(request.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': request.messageId,
            'webhook-timestamp': String(Math.floor(request.timestamp.getTime() / 1000)),
            'webhook-signature': signatures.join(' '),
          },
          body: request.payload,
          signal: AbortSignal.timeout(5000),
        });
        await response.arrayBuffer();
        const durationMs = Date.now() - startedAt;
        if (response.ok) return { outcome: 'delivered', statusCode: response.status, durationMs };
        if (response.status === 410) return { outcome: 'gone', statusCode: 410, durationMs };
        return {
          outcome: 'failed',
          statusCode: response.status,
          error: `HTTP ${response.status}`,
          durationMs,
        };
      } catch (error) {
        return { outcome: 'failed', error: (error as Error).message, durationMs: Date.now() - startedAt };
      }
    },
  };
}

/** Whether `secret` verifies the message: throws as Standard Webhooks' verifier does when it does not. */
export function verifiedWith(secret: string, message: ReceivedMessage): unknown {
  return new Webhook(secret).verify(message.body, message.headers);
}

export interface DeliveryRow {
  deliveryId: string;
  eventId: string;
  subjectId: string;
}

/**
 * An event of a booking and its delivery to an endpoint, written directly as the recording code writes them,
 * with attempts already made; `createdAt` orders the log.
 */
export async function insertDelivery(
  database: Knex,
  options: {
    endpointId: string;
    subjectId?: string;
    sequence?: number;
    type?: string;
    status?: 'pending' | 'delivered' | 'failed';
    attempts?: { statusCode: number | null; error: string | null; durationMs: number }[];
    createdAt?: Date;
  },
): Promise<DeliveryRow> {
  const subjectId = options.subjectId ?? randomUUID();
  const sequence = options.sequence ?? 1;
  const eventId = randomUUID();
  const deliveryId = randomUUID();
  const createdAt = options.createdAt ?? new Date();
  const attempts = options.attempts ?? [];
  const last = attempts.at(-1);
  await database('partner_events').insert({
    id: eventId,
    subject_type: 'booking',
    subject_id: subjectId,
    sequence,
    fact_key: `${options.type ?? 'booking.confirmed'}:${eventId}`,
    type: options.type ?? 'booking.confirmed',
    data: JSON.stringify({ booking_id: subjectId, sequence }),
    occurred_at: createdAt,
  });
  await database('webhook_deliveries').insert({
    id: deliveryId,
    endpoint_id: options.endpointId,
    event_id: eventId,
    subject_id: subjectId,
    sequence,
    status: options.status ?? 'pending',
    attempts: attempts.length,
    last_status_code: last?.statusCode ?? null,
    last_error: last?.error ?? null,
    delivered_at: options.status === 'delivered' ? createdAt : null,
    next_attempt_at:
      options.status === 'pending' && attempts.length > 0 ? new Date(Date.now() + 60_000) : null,
    created_at: createdAt,
    updated_at: createdAt,
  });
  if (attempts.length > 0) {
    await database('webhook_attempts').insert(
      attempts.map((attempt, index) => ({
        delivery_id: deliveryId,
        attempt: index + 1,
        attempted_at: new Date(createdAt.getTime() + index * 1000),
        status_code: attempt.statusCode,
        error: attempt.error,
        duration_ms: attempt.durationMs,
      })),
    );
  }
  return { deliveryId, eventId, subjectId };
}
