// Security headers (helmet) and CORS for the configured origins, the Temporal UI's on the codec endpoint.
import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from '@koa/cors';
import helmet from 'helmet';
import type Koa from 'koa';
import { codecPathPrefix, codecRequestHeaders } from './codec-endpoint';

export interface SecurityMiddlewareOptions {
  /** Exact origins (`https://app.example.com`) allowed to call the API from a browser; `*` allows any. */
  corsOrigins: readonly string[];
  /** Origins of the Temporal UI, allowed on the codec endpoint only (and not by `corsOrigins` there). */
  codecCorsOrigins?: readonly string[];
}

/** Headers a browser client needs to read: versions, locations, retry hints, request ids and challenges. */
const exposedHeaders = [
  'ETag',
  'Location',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-Request-Id',
  'WWW-Authenticate',
];

const allowedRequestHeaders = [
  'Authorization',
  'Content-Type',
  'If-Match',
  'Idempotency-Key',
  'X-Request-Id',
  ...codecRequestHeaders,
];

function corsMiddleware(origins: readonly string[], codecOrigins: readonly string[]): Koa.Middleware {
  const allowed = (list: readonly string[], origin: string) => list.includes('*') || list.includes(origin);
  return cors({
    // An empty answer sends no CORS headers, so browsers keep other origins out.
    origin: (context) => {
      const origin = context.get('Origin');
      const codec = context.path.startsWith(codecPathPrefix);
      return allowed(codec ? codecOrigins : origins, origin) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: allowedRequestHeaders,
    exposeHeaders: exposedHeaders,
    // Bearer tokens travel in a header, never in cookies, so credentialed CORS is not needed.
    credentials: false,
    maxAge: 600,
  });
}

/**
 * helmet's defaults: a same-origin Content-Security-Policy (the docs page has no inline script), HSTS, nosniff,
 * frame denial, no referrer leakage. None depends on the request, so helmet writes them once here, to a
 * response that only records them; running its dozen middlewares per request cost more than a cached read.
 */
function helmetHeaders(): readonly (readonly [string, string])[] {
  const headers: [string, string][] = [];
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name, String(value)]);
      return recorder;
    },
    removeHeader: () => undefined,
  };
  let failure: unknown;
  helmet()({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    failure = error;
  });
  if (failure instanceof Error) throw failure;
  return headers;
}

export function securityMiddleware(options: SecurityMiddlewareOptions): Koa.Middleware {
  const headers = helmetHeaders();
  const crossOrigin = corsMiddleware(options.corsOrigins, options.codecCorsOrigins ?? []);
  return async (context, next) => {
    for (const [name, value] of headers) context.set(name, value);
    // Koa sends no X-Powered-By, the one header helmet removes.
    await crossOrigin(context, next);
  };
}
