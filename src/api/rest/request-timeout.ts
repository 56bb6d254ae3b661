// Bounds how long a request may take: past the limit the client gets 503 UNAVAILABLE with Retry-After.
import type Koa from 'koa';
import { unavailable } from '../../domain/errors';

/**
 * The work below keeps running after the answer (a booking saga cannot be abandoned halfway); an
 * Idempotency-Key retry then finds its outcome once it is recorded.
 */
export function requestTimeout(timeoutMs: number): Koa.Middleware {
  // A timer and a settle on next(), not a Promise.race with a timeout promise: this runs on every request.
  return (context, next) => {
    // Deadlines further in (a create's answer time) count from here, not from when a handler got its turn.
    context.state.receivedAt = Date.now();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(unavailable('The request took too long to complete; retry shortly', 1)),
        timeoutMs,
      );
      next()
        .finally(() => clearTimeout(timer))
        .then(resolve, reject);
    });
  };
}
