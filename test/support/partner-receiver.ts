// A partner's webhook receiver on loopback: verifies every delivery with Standard Webhooks, and can be down for a while.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { findFreePort } from './ports';

export interface ReceivedDelivery {
  webhookId: string;
  type: string;
  /** The envelope's data, as the partner reads it. */
  data: Record<string, unknown>;
  /** Whether the signature verified with the receiver's secret. */
  verified: boolean;
}

export interface PartnerReceiver {
  readonly url: string;
  /** Every request that reached the receiver while it was up, in arrival order, duplicates included. */
  readonly received: ReceivedDelivery[];
  /** Requests whose answer has not been sent yet (the receiver answers after `answerDelayMs`). */
  inFlight(): number;
  up(): Promise<void>;
  /** Stops listening (connections refused), as a receiver that is down. */
  down(): Promise<void>;
}

export async function startPartnerReceiver(options: {
  secret: string;
  answerDelayMs?: number;
  /** Start down: the port is reserved, nothing listens. */
  startDown?: boolean;
}): Promise<PartnerReceiver> {
  const verifier = new Webhook(options.secret);
  const port = await findFreePort();
  const received: ReceivedDelivery[] = [];
  let pending = 0;
  let server: http.Server | undefined;

  const handle = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        verifier.verify(body, request.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      const envelope = JSON.parse(body) as { type: string; data: Record<string, unknown> };
      received.push({
        webhookId: String(request.headers['webhook-id']),
        type: envelope.type,
        data: envelope.data,
        verified,
      });
      pending += 1;
      setTimeout(() => {
        pending -= 1;
        response.writeHead(verified ? 204 : 400).end();
      }, options.answerDelayMs ?? 0);
    });
  };

  const receiver: PartnerReceiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    inFlight: () => pending,
    async up() {
      if (server !== undefined) return;
      server = http.createServer(handle);
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
      if ((server.address() as AddressInfo).port !== port) throw new Error('the receiver lost its port');
    },
    async down() {
      const stopping = server;
      server = undefined;
      if (stopping === undefined) return;
      stopping.closeAllConnections();
      await new Promise<void>((resolve) => stopping.close(() => resolve()));
    },
  };
  if (options.startDown !== true) await receiver.up();
  return receiver;
}

/**
 * Each booking's events as the receiver first got them, duplicates (same `webhook-id`) dropped: what a receiver
 * that deduplicates by id applies, in the order it applied them.
 */
export function firstArrivalsByBooking(received: readonly ReceivedDelivery[]): Map<string, number[]> {
  const seen = new Set<string>();
  const byBooking = new Map<string, number[]>();
  for (const delivery of received) {
    if (seen.has(delivery.webhookId)) continue;
    seen.add(delivery.webhookId);
    const bookingId = String(delivery.data.booking_id);
    byBooking.set(bookingId, [...(byBooking.get(bookingId) ?? []), Number(delivery.data.sequence)]);
  }
  return byBooking;
}
