// Builds the Koa application: cross-cutting middleware, service endpoints, documentation and the /v1 and /api routes.
import Koa from 'koa';
import Router from '@koa/router';
import compress from 'koa-compress';
import type { DataConverter } from '@temporalio/common';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import type { PaymentWebhookApplication } from '../../application/payment-webhooks';
import type { ReadinessCheck } from '../../application/readiness';
import { createApiMetrics, type ApiMetrics } from '../../observability/metrics';
import { createApiRouter } from './api-router';
import { allowingLoopbackWithoutToken, codecOperationIds, createCodecHandlers } from './codec-endpoint';
import { documentationRouter } from './docs';
import type { IdempotencyStore } from './idempotency';
import { createOperationHandlers, type Applications } from './operation-handlers';
import { paymentWebhookRouter } from './payment-webhook-routes';
import { accessLog, problemDetails, requestIdentity } from './problem-details';
import { createRateLimits, type RateLimitSettings } from './rate-limits';
import { countingTokenFailures, requestMetrics } from './request-metrics';
import { requestTimeout } from './request-timeout';
import { securityMiddleware } from './security-middleware';

/** Text formats worth compressing; the OpenAPI YAML and JSON bodies are the large ones. */
const compressibleType = /json|yaml|javascript|css|html|text\/|xml/i;

/**
 * koa-compress, skipped for a request that accepts no encoding: it would answer identity after negotiating it on
 * every response, which cost internal callers (no Accept-Encoding) a tenth of a cached read. Responses still vary on
 * the header either way, so caches keep the two apart.
 */
function compressWhenAccepted(): Koa.Middleware {
  const compression = compress({
    threshold: 1024,
    filter: (contentType) => compressibleType.test(contentType),
  });
  return (context, next) => {
    if (context.get('Accept-Encoding') !== '') return compression(context, next) as Promise<void>;
    context.vary('Accept-Encoding');
    return next();
  };
}

export interface RestSettings {
  bodyLimitBytes: number;
  requestTimeoutMs: number;
  /** Take the client address from X-Forwarded-For (set only behind a proxy that overwrites it). */
  trustProxy: boolean;
  rateLimits: RateLimitSettings;
  /** Browser origins allowed by CORS (CORS_ORIGINS); empty: same-origin only. */
  corsOrigins?: readonly string[];
  /** The codec endpoint: Temporal UI origins (CODEC_CORS_ORIGINS), and the development loopback exception. */
  codec?: { corsOrigins: readonly string[]; allowLoopbackWithoutToken: boolean };
}

export interface RestDependencies {
  logger: Logger;
  checkReadiness: ReadinessCheck;
  settings: RestSettings;
  applications: Applications;
  idempotency: IdempotencyStore;
  /** Authenticates (unless the operation is public) and enforces the operation's contract policy. */
  operationGuard: (operationId: string) => Koa.Middleware;
  /** The Temporal data converter; the codec endpoint decodes and encodes payloads with it for operators. */
  dataConverter: DataConverter;
  /** Routers of other parts (the embedded identity provider), mounted behind the same middleware. */
  additionalRouters?: Router[];
  /** Where requests are timed and refusals counted (the process's registry); a registry of its own when absent. */
  metrics?: ApiMetrics;
  /** The card processor's webhooks, with where a delivery refused before reaching them is counted. */
  paymentWebhooks?: {
    application: PaymentWebhookApplication;
    onRefused(reason: 'signature' | 'too_large'): void;
  };
}

export function restSettingsFromConfig(config: Pick<Config, 'http' | 'rateLimit' | 'codec'>): RestSettings {
  return {
    bodyLimitBytes: config.http.bodyLimitBytes,
    requestTimeoutMs: config.http.requestTimeoutMs,
    trustProxy: config.http.trustProxy,
    rateLimits: config.rateLimit,
    corsOrigins: config.http.corsOrigins,
    codec: config.codec,
  };
}

function serviceRouter(dependencies: RestDependencies): Router {
  const router = new Router();
  router.get('/healthz', (context) => {
    context.body = { status: 'ok' };
  });
  router.get('/readyz', async (context) => {
    const readiness = await dependencies.checkReadiness();
    context.status = readiness.ready ? 200 : 503;
    if (!readiness.ready) context.set('Retry-After', '5');
    context.body = { status: readiness.ready ? 'ok' : 'unavailable', checks: readiness.checks };
  });
  return router;
}

export function createRestApp(dependencies: RestDependencies): Koa {
  const { settings } = dependencies;
  const app = new Koa();
  app.proxy = settings.trustProxy;
  // Behind a proxy only the address the nearest proxy saw is trusted; earlier hops are client-supplied.
  app.maxIpsCount = settings.trustProxy ? 1 : 0;
  const metrics = dependencies.metrics ?? createApiMetrics();
  const rateLimits = createRateLimits(settings.rateLimits, (limit) =>
    metrics.requestRefusals.inc({ front: 'rest', reason: `rate_limit_${limit}` }),
  );

  app.use(requestMetrics(metrics));
  app.use(requestIdentity());
  app.use(accessLog(dependencies.logger));
  app.use(compressWhenAccepted());
  app.use(problemDetails(dependencies.logger));
  app.use(
    securityMiddleware({
      corsOrigins: settings.corsOrigins ?? [],
      codecCorsOrigins: settings.codec?.corsOrigins ?? [],
    }),
  );
  app.use(requestTimeout(settings.requestTimeoutMs));
  if (rateLimits.addressLimit !== undefined) app.use(rateLimits.addressLimit);

  const operationGuard = (operationId: string): Koa.Middleware =>
    countingTokenFailures(
      metrics,
      settings.codec?.allowLoopbackWithoutToken === true && codecOperationIds.has(operationId)
        ? allowingLoopbackWithoutToken(dependencies.operationGuard(operationId))
        : dependencies.operationGuard(operationId),
    );
  const apiRouter = createApiRouter({
    handlers: {
      ...createOperationHandlers(dependencies.applications),
      ...createCodecHandlers(dependencies.dataConverter),
    },
    operationGuard,
    userRateLimit: rateLimits.userLimit,
    idempotency: dependencies.idempotency,
    bodyLimitBytes: settings.bodyLimitBytes,
  });
  // The API's operations first: they take nearly every request, which then skips matching the other routers.
  const routers = [
    apiRouter,
    serviceRouter(dependencies),
    ...(dependencies.paymentWebhooks === undefined
      ? []
      : [paymentWebhookRouter(dependencies.paymentWebhooks.application, dependencies.paymentWebhooks)]),
    documentationRouter(),
    ...(dependencies.additionalRouters ?? []),
  ];
  for (const router of routers) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
