// The small HTTP server of the metrics listeners: a few GET paths (/metrics, probes), nothing else.
import http from 'node:http';
import type { Registry } from 'prom-client';

export interface PlainAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** What a path answers; one function per path, called for GET only. */
export type PlainRoutes = Readonly<Record<string, () => Promise<PlainAnswer>>>;

function send(
  response: http.ServerResponse,
  answer: PlainAnswer,
  headers: Record<string, string> = {},
): void {
  response.writeHead(answer.status, {
    'content-type': answer.contentType,
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(answer.body);
}

const plainText = 'text/plain; charset=utf-8';

/** Answers GET on the given paths, 405 for other methods there, 404 elsewhere; the caller listens. */
export function createPlainHttpServer(routes: PlainRoutes, onError: (error: unknown) => void): http.Server {
  return http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://metrics').pathname;
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (route === undefined) {
      send(response, { status: 404, contentType: plainText, body: 'not found\n' });
      return;
    }
    if (request.method !== 'GET') {
      send(response, { status: 405, contentType: plainText, body: 'use GET\n' }, { allow: 'GET' });
      return;
    }
    route().then(
      (answer) => send(response, answer),
      (error: unknown) => {
        onError(error);
        send(response, { status: 500, contentType: plainText, body: 'metrics could not be collected\n' });
      },
    );
  });
}

/** GET /metrics of one registry, in the Prometheus text format. */
export function registryMetrics(registry: Registry): () => Promise<PlainAnswer> {
  return async () => ({ status: 200, contentType: registry.contentType, body: await registry.metrics() });
}
