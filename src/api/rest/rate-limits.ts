// Request rate limits per client address and per user, announced in RateLimit-* headers, 429 when spent.
import type Koa from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Actor } from '../../domain/actor';
import { rateLimited } from '../../domain/errors';

export interface RateLimitSettings {
  windowSeconds: number;
  /** Requests per window for one user; 0 turns the limit off. */
  perUser: number;
  /** Requests per window from one client address; 0 turns the limit off. */
  perAddress: number;
}

interface Quota {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** Only the API surfaces (the operators' codec endpoint included) are limited; probes and documentation must stay reachable under load. */
export function isLimitedPath(path: string): boolean {
  return /^\/(v1|api|codec)(\/|$)/.test(path);
}

/**
 * Counters live in this process's memory (rate-limiter-flexible's memory store), so with N API replicas
 * behind a balancer a client gets up to N times the limit. Swapping in its PostgreSQL or Redis store makes
 * the limit cluster-wide at the price of a round trip per request.
 */
function createLimiter(points: number, windowSeconds: number, keyPrefix: string) {
  if (points <= 0) return undefined;
  const limiter = new RateLimiterMemory({ points, duration: windowSeconds, keyPrefix });
  return async (key: string): Promise<{ quota: Quota; exceeded: boolean }> => {
    const toQuota = (result: RateLimiterRes): Quota => ({
      limit: points,
      remaining: Math.max(0, result.remainingPoints),
      resetSeconds: Math.max(0, Math.ceil(result.msBeforeNext / 1000)),
    });
    try {
      return { quota: toQuota(await limiter.consume(key)), exceeded: false };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return { quota: toQuota(rejection), exceeded: true };
      throw rejection;
    }
  };
}

/** Both limits may apply to one request; the headers describe the one closer to being spent. */
function announce(context: Koa.Context, quota: Quota): void {
  const announced = context.state.rateLimitQuota as Quota | undefined;
  if (announced !== undefined && announced.remaining <= quota.remaining) return;
  context.state.rateLimitQuota = quota;
  context.set('RateLimit-Limit', String(quota.limit));
  context.set('RateLimit-Remaining', String(quota.remaining));
  context.set('RateLimit-Reset', String(quota.resetSeconds));
}

export type RateLimitName = 'address' | 'user';

/** The limits that are on, as middleware; a limit that is off is no middleware at all, so it costs no request. */
export interface RateLimits {
  addressLimit?: Koa.Middleware;
  /** Runs after authentication: the user is known only from a verified token. */
  userLimit?: Koa.Middleware;
}

/** `onRefusal` hears each 429 a limit answers (the metrics count them), just before it is thrown. */
export function createRateLimits(
  settings: RateLimitSettings,
  onRefusal: (limit: RateLimitName) => void = () => {},
): RateLimits {
  const perAddress = createLimiter(settings.perAddress, settings.windowSeconds, 'address');
  const perUser = createLimiter(settings.perUser, settings.windowSeconds, 'user');

  function enforce(context: Koa.Context, limit: RateLimitName, outcome: { quota: Quota; exceeded: boolean }) {
    announce(context, outcome.quota);
    if (outcome.exceeded) {
      context.set('RateLimit-Remaining', '0');
      onRefusal(limit);
      throw rateLimited(Math.max(1, outcome.quota.resetSeconds));
    }
  }

  const limits: RateLimits = {};
  if (perAddress !== undefined) {
    limits.addressLimit = async (context, next) => {
      if (isLimitedPath(context.path)) enforce(context, 'address', await perAddress(context.ip));
      await next();
    };
  }
  if (perUser !== undefined) {
    limits.userLimit = async (context, next) => {
      const actor = context.state.actor as Actor | undefined;
      if (actor !== undefined) enforce(context, 'user', await perUser(actor.userId));
      await next();
    };
  }
  return limits;
}
