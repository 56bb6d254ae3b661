// The REST front's metrics middleware: route templates (never raw paths), statuses, replays, refusals by the
// middleware that refuses, token failures by reason.
import Router from '@koa/router';
import Koa from 'koa';
import request from 'supertest';
import { createRateLimits } from '../../../src/api/rest/rate-limits';
import { countingTokenFailures, requestMetrics, routeLabelOf } from '../../../src/api/rest/request-metrics';
import { rateLimited } from '../../../src/domain/errors';
import { createApiMetrics, type ApiMetrics } from '../../../src/observability/metrics';
import { missingTokenError } from '../../../src/security/token-verifier';

async function counted(metrics: ApiMetrics, name: string, labels: Record<string, string>): Promise<number> {
  // Histograms list their _count, _sum and _bucket samples under the histogram's name.
  const samples = (await metrics.registry.getMetricsAsJSON()).flatMap((metric) =>
    (metric.values as { value: number; metricName?: string; labels: Record<string, string | number> }[]).map(
      (value) => ({ ...value, metricName: value.metricName ?? metric.name }),
    ),
  );
  return samples
    .filter(
      (sample) =>
        sample.metricName === name &&
        Object.entries(labels).every(([label, expected]) => String(sample.labels[label]) === expected),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** An app shaped like the service's: metrics first, errors turned into statuses, a router with a template. */
function appWith(metrics: ApiMetrics, routeMiddleware: Koa.Middleware[] = []): Koa {
  const app = new Koa();
  app.use(requestMetrics(metrics));
  app.use(async (context, next) => {
    try {
      await next();
    } catch (error) {
      context.status = (error as { code?: string }).code === 'RATE_LIMITED' ? 429 : 401;
    }
  });
  const router = new Router();
  router.get('/v1/bookings/:bookingId', ...routeMiddleware, (context) => {
    if (context.params.bookingId === 'replayed') context.set('Idempotent-Replayed', 'true');
    context.body = { id: context.params.bookingId };
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

describe('routeLabelOf', () => {
  it('is the matched template, the 405 route template, or unmatched', () => {
    expect(routeLabelOf({ _matchedRoute: '/v1/bookings/:bookingId' })).toBe('/v1/bookings/:bookingId');
    expect(
      routeLabelOf({
        matched: [
          { path: '/v1/(.*)', methods: [] },
          { path: '/v1/bookings/:bookingId', methods: ['GET', 'HEAD'] },
        ],
      }),
    ).toBe('/v1/bookings/:bookingId');
    expect(routeLabelOf({ matched: [] })).toBe('unmatched');
    expect(routeLabelOf({})).toBe('unmatched');
  });
});

describe('requestMetrics', () => {
  it('labels requests by route template, method and status, never by the raw path', async () => {
    const metrics = createApiMetrics();
    const app = appWith(metrics);
    await request(app.callback()).get('/v1/bookings/0f1e2d3c').expect(200);
    await request(app.callback()).get('/v1/bookings/4b5a6978').expect(200);
    await request(app.callback()).post('/v1/bookings/4b5a6978').expect(405);
    await request(app.callback()).get('/no/such/path/123').expect(404);

    const duration = 'bus_booking_http_request_duration_seconds_count';
    expect(
      await counted(metrics, duration, { route: '/v1/bookings/:bookingId', method: 'GET', status: '200' }),
    ).toBe(2);
    expect(
      await counted(metrics, duration, { route: '/v1/bookings/:bookingId', method: 'POST', status: '405' }),
    ).toBe(1);
    expect(await counted(metrics, duration, { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    const exposition = await metrics.registry.metrics();
    expect(exposition).not.toContain('0f1e2d3c');
    expect(exposition).not.toContain('/no/such/path');
    expect(await counted(metrics, 'bus_booking_http_requests_in_flight', {})).toBe(0);
  });

  it('counts an answer the idempotency store replayed', async () => {
    const metrics = createApiMetrics();
    const app = appWith(metrics);
    await request(app.callback()).get('/v1/bookings/fresh').expect(200);
    expect(await counted(metrics, 'bus_booking_idempotent_replays_total', { front: 'rest' })).toBe(0);
    await request(app.callback()).get('/v1/bookings/replayed').expect(200);
    expect(await counted(metrics, 'bus_booking_idempotent_replays_total', { front: 'rest' })).toBe(1);
  });
});

describe("the rate limits' refusals", () => {
  const settings = { windowSeconds: 60, perUser: 1, perAddress: 0 };
  const asUser: Koa.Middleware = (context, next) => {
    context.state.actor = { userId: 'user-1' };
    return next();
  };
  const refusing: Koa.Middleware = () => Promise.reject(rateLimited(30));

  it("reports each 429 of a limit under the limit's name, and nothing for requests it lets through", async () => {
    const refusals: string[] = [];
    const { userLimit } = createRateLimits(settings, (limit) => refusals.push(limit));
    const app = appWith(createApiMetrics(), [asUser, userLimit!]);
    await request(app.callback()).get('/v1/bookings/a').expect(200);
    expect(refusals).toEqual([]);
    await request(app.callback()).get('/v1/bookings/a').expect(429);
    expect(refusals).toEqual(['user']);
  });

  it('does not report a 429 raised after the limit let the request through (the open-hold cap)', async () => {
    const refusals: string[] = [];
    const { userLimit } = createRateLimits(settings, (limit) => refusals.push(limit));
    const app = appWith(createApiMetrics(), [asUser, userLimit!, refusing]);
    await request(app.callback()).get('/v1/bookings/a').expect(429);
    expect(refusals).toEqual([]);
  });

  it('makes no middleware of a limit that is off, so it costs a request nothing', () => {
    expect(createRateLimits({ windowSeconds: 60, perUser: 0, perAddress: 0 })).toEqual({});
    expect(Object.keys(createRateLimits({ windowSeconds: 60, perUser: 0, perAddress: 5 }))).toEqual([
      'addressLimit',
    ]);
  });
});

describe('countingTokenFailures', () => {
  it('counts the refused tokens of the guard by reason', async () => {
    const metrics = createApiMetrics();
    const guard: Koa.Middleware = () => Promise.reject(missingTokenError());
    const app = appWith(metrics, [countingTokenFailures(metrics, guard)]);
    await request(app.callback()).get('/v1/bookings/a').expect(401);
    expect(
      await counted(metrics, 'bus_booking_token_verification_failures_total', { reason: 'missing' }),
    ).toBe(1);
    expect(await counted(metrics, 'bus_booking_token_verification_failures_total', { reason: 'other' })).toBe(
      0,
    );
  });

  it('starts every reason at 0, so rates exist before the first failure', async () => {
    const exposition = await createApiMetrics().registry.metrics();
    for (const reason of ['missing', 'malformed', 'expired', 'bad_signature', 'unknown_key', 'other']) {
      expect(exposition).toContain(`bus_booking_token_verification_failures_total{reason="${reason}"} 0`);
    }
  });
});
