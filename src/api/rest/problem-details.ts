// Turns every failure into RFC 9457 problem+json with the service's error code, and tags requests with an id.
import crypto from 'node:crypto';
import type Koa from 'koa';
import { DomainError, errorCodeMappings, toDomainError, type ErrorCode } from '../../domain/errors';
import type { Logger } from '../../logger';

const requestIdPattern = /^[!-~]{1,128}$/;

export function problemType(code: ErrorCode): string {
  return `urn:bus-booking:problem:${code.toLowerCase().replace(/_/g, '-')}`;
}

export function problemBody(error: DomainError, instance: string, requestId: string) {
  const mapping = errorCodeMappings[error.code];
  return {
    type: problemType(error.code),
    title: mapping.title,
    status: mapping.httpStatus,
    detail: error.message,
    instance,
    code: error.code,
    request_id: requestId,
    ...(error.fieldViolations.length > 0 ? { errors: error.fieldViolations } : {}),
  };
}

/** Accepts a well-formed X-Request-Id or makes one; it is echoed back and carried by every log line. */
export function requestIdentity(): Koa.Middleware {
  return async (context, next) => {
    const offered = context.get('X-Request-Id');
    const requestId = requestIdPattern.test(offered) ? offered : crypto.randomUUID();
    context.state.requestId = requestId;
    context.set('X-Request-Id', requestId);
    await next();
  };
}

function retryAfterSeconds(error: DomainError): number | undefined {
  const value = error.details.retryAfterSeconds;
  return typeof value === 'number' ? value : undefined;
}

/** Koa errors with an HTTP status (from body parsing, routing) become the matching domain code. */
function fromHttpError(error: {
  status?: number;
  expose?: boolean;
  message?: string;
}): DomainError | undefined {
  switch (error.status) {
    case 400:
      return new DomainError(
        'VALIDATION_FAILED',
        error.expose && error.message ? error.message : 'Bad request',
      );
    case 413:
      return new DomainError('PAYLOAD_TOO_LARGE', 'The request body is too large');
    case 415:
      return new DomainError('VALIDATION_FAILED', 'Unsupported media type: send application/json');
    default:
      return undefined;
  }
}

export function problemDetails(logger: Logger): Koa.Middleware {
  return async (context, next) => {
    try {
      await next();
      if (context.status === 404 && context.body === undefined) {
        throw new DomainError('NOT_FOUND', `No resource at ${context.path}`);
      }
      if (context.status === 405 && context.body === undefined) {
        throw new DomainError(
          'VALIDATION_FAILED',
          `Method ${context.method} is not allowed on ${context.path}`,
        );
      }
    } catch (thrown) {
      const httpError = thrown as { status?: number; expose?: boolean; message?: string };
      const error =
        thrown instanceof DomainError ? thrown : (fromHttpError(httpError) ?? toDomainError(thrown));
      const requestId = String(context.state.requestId ?? '');
      if (error.code === 'INTERNAL') {
        logger.error({ err: thrown, requestId, path: context.path }, 'request failed');
      }
      const body = problemBody(error, context.path, requestId);
      // 405 keeps its own status (and the Allow header the router set); everything else follows the code.
      context.status = context.status === 405 && error.code === 'VALIDATION_FAILED' ? 405 : body.status;
      if (context.status === 405) body.status = 405;
      const retryAfter = retryAfterSeconds(error);
      if (retryAfter !== undefined) context.set('Retry-After', String(retryAfter));
      context.type = 'application/problem+json';
      context.body = body;
    }
  };
}
