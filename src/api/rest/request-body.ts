// Reads JSON request bodies (strict JSON, size limit) and turns every way a body can be wrong into a problem.
import type { Http2ServerRequest } from 'node:http2';
import { bodyParser } from '@koa/bodyparser';
import type Koa from 'koa';
import typeis from 'type-is';
import { DomainError, payloadTooLarge, validationFailed } from '../../domain/errors';
import { unsupportedMediaType } from './problem-details';

function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

/** Messages of our own: the parser's can quote the rejected input. */
function bodyError(error: unknown, limitBytes: number): DomainError {
  switch (statusOf(error)) {
    case 413:
      return payloadTooLarge(limitBytes);
    case 415:
      // An unknown charset or content encoding: the body cannot be read as JSON text.
      return unsupportedMediaType();
    case 400:
    case undefined:
      return new DomainError('VALIDATION_FAILED', 'The request body is not a JSON object', {
        fieldViolations: [{ field: '', message: 'must be well-formed JSON (an object)' }],
      });
    default:
      return new DomainError('VALIDATION_FAILED', 'The request body could not be read');
  }
}

/**
 * HTTP/1.1 announces a body in its headers (Content-Length or Transfer-Encoding). HTTP/2 need not: a request has
 * a body when its stream did not end with the headers. An explicit `Content-Length: 0` (fetch sends it for a
 * bodyless PUT) is no body, whatever its type.
 */
function carriesBody(context: Koa.Context): boolean {
  if (context.request.length === 0 && !context.get('Transfer-Encoding')) return false;
  if (typeis.hasBody(context.req)) return true;
  const { stream } = context.req as { stream?: Http2ServerRequest['stream'] };
  return stream !== undefined && !stream.endAfterHeaders;
}

/**
 * Whether the request has no body, a JSON one, or one of another media type. Not Koa's `request.is`: it takes an
 * HTTP/2 body without Content-Length for no body at all.
 */
export function requestBodyKind(context: Koa.Context): 'none' | 'json' | 'other' {
  if (!carriesBody(context)) return 'none';
  return typeis.is(context.get('Content-Type'), ['application/json']) === false ? 'other' : 'json';
}

/**
 * Puts the parsed body in `context.request.body`: `undefined` when the request has none. Only
 * `application/json` is accepted; strict mode refuses bare JSON scalars as bodies.
 */
export function jsonRequestBody(options: { limitBytes: number; required: boolean }): Koa.Middleware {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonStrict: true,
    jsonLimit: options.limitBytes,
    parsedMethods: ['POST', 'PUT', 'PATCH'],
  });
  return async (context, next) => {
    const kind = requestBodyKind(context);
    if (kind === 'none') {
      if (options.required) {
        throw validationFailed([{ field: '', message: 'a JSON request body is required' }]);
      }
      await next();
      return;
    }
    if (kind === 'other') throw unsupportedMediaType();
    try {
      await parse(context, () => Promise.resolve());
    } catch (error) {
      throw bodyError(error, options.limitBytes);
    }
    await next();
  };
}
