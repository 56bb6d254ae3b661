// An HTTP(S) server on a loopback address that records every connection and request it gets and answers as told.
import http from 'node:http';
import https from 'node:https';
import { once } from 'node:events';
import type net from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface LoopbackReceiver {
  /** `http(s)://<address>:<port>`, IPv6 in brackets. */
  origin: string;
  port: number;
  /** TCP connections accepted, whether or not a request came over them. */
  connections: number;
  /** Connections closed again: once it equals `connections`, nothing more can arrive on them. */
  closedConnections: number;
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

/** How the receiver answers a request; it may leave the response open to stand for a receiver that hangs. */
export type Answer = (request: RecordedRequest, response: http.ServerResponse) => void;

const answerNoContent: Answer = (_request, response) => {
  response.writeHead(204).end();
};

export async function startLoopbackReceiver(
  options: { address?: '127.0.0.1' | '::1'; answer?: Answer; tls?: { cert: Buffer; key: Buffer } } = {},
): Promise<LoopbackReceiver> {
  const address = options.address ?? '127.0.0.1';
  const answer = options.answer ?? answerNoContent;
  const sockets = new Set<net.Socket>();
  const handler: http.RequestListener = (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      receiver.requests.push(recorded);
      answer(recorded, response);
    });
  };
  const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
  // Counted at TCP accept, TLS or not, so a connection the client drops before any byte still shows.
  server.on('connection', (socket: net.Socket) => {
    receiver.connections += 1;
    sockets.add(socket);
    socket.on('close', () => {
      receiver.closedConnections += 1;
      sockets.delete(socket);
    });
  });
  // A client that refuses the certificate is one of the cases tests make: not the server's error.
  server.on('tlsClientError', () => undefined);
  server.listen(0, address);
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const host = address.includes(':') ? `[${address}]` : address;
  const receiver: LoopbackReceiver = {
    origin: `${options.tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    connections: 0,
    closedConnections: 0,
    requests: [],
    async stop() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
  return receiver;
}
