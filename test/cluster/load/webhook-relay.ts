// localstripe's webhooks passed on once, as they are, to one API process's endpoint, with what became of each.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/** One delivery: `delivered` (2xx), `refused` (another status), `unreachable` (the process was down). */
export interface RelayedDelivery {
  type: string;
  objectId: string | undefined;
  at: number;
  outcome: 'delivered' | 'refused' | 'unreachable';
  status?: number;
}

export interface WebhookRelay {
  /** Where localstripe posts. */
  url: string;
  deliveries: RelayedDelivery[];
  close(): Promise<void>;
}

/**
 * localstripe sends each event once and never again, so an API process that is down when it comes loses it for
 * good: the relay answers localstripe what the endpoint answered (502 when nothing did) and retries nothing, and
 * counts the losses the reconciliation has to mend.
 */
export async function startWebhookRelay(target: string): Promise<WebhookRelay> {
  const deliveries: RelayedDelivery[] = [];
  const server = http.createServer((incoming, answer) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      let type = 'unknown';
      let objectId: string | undefined;
      try {
        const event = JSON.parse(body.toString('utf8')) as {
          type?: string;
          data?: { object?: { id?: string } };
        };
        type = event.type ?? type;
        objectId = event.data?.object?.id;
      } catch {
        // Passed on all the same: the endpoint decides what a body that is no event gets.
      }
      const at = Date.now();
      fetch(target, {
        method: 'POST',
        headers: {
          'content-type': String(incoming.headers['content-type'] ?? 'application/json'),
          'stripe-signature': String(incoming.headers['stripe-signature'] ?? ''),
        },
        body,
        signal: AbortSignal.timeout(15_000),
      }).then(
        async (response) => {
          await response.arrayBuffer();
          deliveries.push({
            type,
            objectId,
            at,
            outcome: response.ok ? 'delivered' : 'refused',
            status: response.status,
          });
          answer.writeHead(response.status).end();
        },
        () => {
          deliveries.push({ type, objectId, at, outcome: 'unreachable' });
          answer.writeHead(502).end();
        },
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/relay`,
    deliveries,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
