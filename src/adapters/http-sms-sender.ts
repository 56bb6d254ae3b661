// SmsSender for an HTTP SMS provider: POSTs JSON with an API key header; 4xx is permanent, the rest is retried.
import { PermanentDeliveryError, type SmsSender } from '../ports/notification-senders';

export interface HttpSmsSenderOptions {
  /** The provider's send endpoint, e.g. `https://sms.example.com/v1/messages`. */
  url: string;
  apiKey: string;
  timeoutMs: number;
  /** Header carrying the API key. */
  apiKeyHeader?: string;
}

/** 408 and 429 ask the caller to come back later; every other 4xx says the request itself is wrong. */
const retryableClientStatuses = new Set([408, 425, 429]);

/**
 * Request: `{ "to": "+351…", "text": "…", "reference": "<idempotency key>" }` with `Idempotency-Key` set too, so a
 * provider that deduplicates does. Response: any 2xx; the message id is read from `id` or `message_id` if present.
 */
export function createHttpSmsSender(options: HttpSmsSenderOptions): SmsSender {
  const apiKeyHeader = options.apiKeyHeader ?? 'X-API-Key';
  return {
    async send(message) {
      let response: Response;
      let body: string;
      try {
        response = await fetch(options.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            [apiKeyHeader]: options.apiKey,
            'idempotency-key': message.idempotencyKey,
          },
          body: JSON.stringify({ to: message.to, text: message.text, reference: message.idempotencyKey }),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        body = await response.text();
      } catch (error) {
        // The abort reason is a DOMException, which is not always an `instanceof Error`: compare by name.
        const timedOut = (error as { name?: unknown } | null)?.name === 'TimeoutError';
        throw new Error(
          timedOut
            ? `SMS provider did not answer within ${options.timeoutMs} ms`
            : 'SMS provider unreachable',
          { cause: error },
        );
      }
      if (response.status >= 400 && response.status < 500 && !retryableClientStatuses.has(response.status)) {
        throw new PermanentDeliveryError(`SMS provider rejected the message (HTTP ${response.status})`);
      }
      if (!response.ok) throw new Error(`SMS provider failed (HTTP ${response.status})`);
      return { providerMessageId: providerMessageId(body) ?? message.idempotencyKey };
    },
  };
}

function providerMessageId(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { id, message_id: messageId } = parsed as { id?: unknown; message_id?: unknown };
    const value = id ?? messageId;
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  } catch {
    return undefined;
  }
}
