// Koa middleware feeding the API's metrics: request durations by route template, requests in flight, replays,
// refusals by the rate limits and token failures, each counted where the middleware that refuses runs.
import type Koa from 'koa';
import type { BookingApplication } from '../../application/interface';
import { DomainError } from '../../domain/errors';
import type { IdentityProvider } from '../../identity/identity-provider';
import type { ApiMetrics } from '../../observability/metrics';
import { openHoldCapRefusalOf, tokenFailureReasonOf } from '../../observability/metrics-labels';

/** What @koa/router leaves on the context about the route it matched. */
interface RoutedContext {
  _matchedRoute?: string | RegExp;
  matched?: readonly { path: string | RegExp; methods: readonly string[] }[];
}

/**
 * The route label: the template of the route that served the request (`/v1/bookings/:bookingId`), never the raw
 * path, whose ids would make a series per booking. A path served only for other methods (405) keeps its
 * template; a request no route matched is `unmatched`.
 */
export function routeLabelOf(context: RoutedContext): string {
  if (context._matchedRoute !== undefined) return String(context._matchedRoute);
  const routeForOtherMethods = context.matched?.find((layer) => layer.methods.length > 0);
  return routeForOtherMethods === undefined ? 'unmatched' : String(routeForOtherMethods.path);
}

function statusOfUncaught(error: unknown): number {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : 500;
}

/** Outermost: times every request with its final status (after the problem+json middleware shaped it). */
export function requestMetrics(metrics: ApiMetrics): Koa.Middleware {
  return async (context, next) => {
    const startedAt = performance.now();
    metrics.httpRequestsInFlight.inc();
    let status: number | undefined;
    try {
      await next();
      status = context.status;
    } catch (error) {
      status = statusOfUncaught(error);
      throw error;
    } finally {
      metrics.httpRequestsInFlight.dec();
      metrics.httpRequestDuration.observe(
        { method: context.method, route: routeLabelOf(context as RoutedContext), status: String(status) },
        (performance.now() - startedAt) / 1000,
      );
      // The idempotency store marks a stored answer it sends again.
      if (context.response.get('Idempotent-Replayed') === 'true') {
        metrics.idempotentReplays.inc({ front: 'rest' });
      }
    }
  };
}

/**
 * `middleware`, reporting the errors it throws itself, before it hands the request on: its refusals. Errors of
 * the middleware after it pass through it too and are not reported.
 */
function reportingRefusals(middleware: Koa.Middleware, onRefusal: (error: unknown) => void): Koa.Middleware {
  return async (context, next) => {
    let handedOn = false;
    try {
      await middleware(context, () => {
        handedOn = true;
        return next();
      });
    } catch (error) {
      if (!handedOn) onRefusal(error);
      throw error;
    }
  };
}

/** An operation guard, its refused tokens counted by reason (a refused scope or role is not a token failure). */
export function countingTokenFailures(metrics: ApiMetrics, guard: Koa.Middleware): Koa.Middleware {
  return reportingRefusals(guard, (error) => {
    if (error instanceof DomainError && error.code === 'UNAUTHENTICATED') {
      metrics.tokenVerificationFailures.inc({ reason: tokenFailureReasonOf(error) });
    }
  });
}

/** The bookings application for REST, its open-hold-cap refusals counted (the cap is checked inside the create). */
export function countingOpenHoldRefusals(
  metrics: ApiMetrics,
  bookings: BookingApplication,
): BookingApplication {
  return {
    ...bookings,
    createBooking: (...args) =>
      bookings.createBooking(...args).catch((error: unknown) => {
        if (openHoldCapRefusalOf(error) !== undefined) {
          metrics.requestRefusals.inc({ front: 'rest', reason: 'open_hold_cap' });
        }
        throw error;
      }),
  };
}

/** The embedded identity provider, its throttled logins (RATE_LIMITED from login) counted as refusals. */
export function countingLoginThrottle(
  metrics: ApiMetrics,
  identityProvider: IdentityProvider,
): IdentityProvider {
  const countingRefusal = (error: unknown): never => {
    if (error instanceof DomainError && error.code === 'RATE_LIMITED') {
      metrics.requestRefusals.inc({ front: 'rest', reason: 'login_throttle' });
    }
    throw error;
  };
  return {
    ...identityProvider,
    login: (...args) => identityProvider.login(...args).catch(countingRefusal),
    authenticate: (...args) => identityProvider.authenticate(...args).catch(countingRefusal),
  };
}
