// Security headers (helmet) and CORS limited to the configured origins, for every REST response.
import cors from '@koa/cors';
import type Koa from 'koa';
import helmet from 'koa-helmet';

export interface SecurityMiddlewareOptions {
  /** Exact origins (`https://app.example.com`) allowed to call the API from a browser; `*` allows any. */
  corsOrigins: readonly string[];
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
];

function corsMiddleware(origins: readonly string[]): Koa.Middleware {
  const allowAny = origins.includes('*');
  return cors({
    // An empty answer sends no CORS headers, so browsers keep other origins out.
    origin: (context) => {
      const origin = context.get('Origin');
      return allowAny || origins.includes(origin) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: allowedRequestHeaders,
    exposeHeaders: exposedHeaders,
    // Bearer tokens travel in a header, never in cookies, so credentialed CORS is not needed.
    credentials: false,
    maxAge: 600,
  });
}

export function securityMiddleware(options: SecurityMiddlewareOptions): Koa.Middleware {
  // helmet's defaults: a same-origin Content-Security-Policy (the docs page has no inline script),
  // HSTS, nosniff, frame denial, no referrer leakage and no X-Powered-By.
  const headers = helmet();
  const crossOrigin = corsMiddleware(options.corsOrigins);
  return (context, next) => headers(context, () => crossOrigin(context, next));
}
