// Turns every failure into RFC 9457 problem+json with the service's error code, and tags requests with an id.
import crypto from 'node:crypto';
import type Koa from 'koa';
import {
  DomainError,
  errorCodeMappings,
  findDomainError,
  internalError,
  type ErrorCode,
} from '../../domain/errors';
import { fixedFieldLogger, type Logger } from '../../logger';
import { correlationFields, runWithRequestId } from '../../observability/request-context';
import { setServerSpanRoute } from '../../observability/tracing';
import { isWellFormedRequestId } from '../../domain/request-correlation';
import { bearerRealm } from '../../security/token-verifier';
import { sendResponse, type RestResponse } from './responses';

/** HTTP statuses that carry VALIDATION_FAILED but tell a different story than 400 (see ErrorCode in the document). */
const protocolProblemTitles: Readonly<Record<number, string>> = {
  405: 'Method not allowed',
  415: 'Unsupported media type',
  428: 'Precondition required',
};

export function problemType(code: ErrorCode): string {
  return `urn:bus-booking:problem:${code.toLowerCase().replace(/_/g, '-')}`;
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ErrorCode;
  request_id: string;
  /** With PRICE_CHANGED: the price the request would pay now. */
  current_price?: unknown;
  errors?: { field: string; message: string }[];
}

function httpStatusOverride(error: DomainError): number | undefined {
  const status = error.details.httpStatus;
  return typeof status === 'number' && protocolProblemTitles[status] !== undefined ? status : undefined;
}

export function problemBody(error: DomainError, instance: string, requestId: string): ProblemDocument {
  const mapping = errorCodeMappings[error.code];
  const status = httpStatusOverride(error) ?? mapping.httpStatus;
  return {
    type: problemType(error.code),
    title: protocolProblemTitles[status] ?? mapping.title,
    status,
    detail: error.message,
    instance,
    code: error.code,
    request_id: requestId,
    ...(error.code === 'PRICE_CHANGED' && isJsonObject(error.details.currentPrice)
      ? { current_price: currentPriceJson(error.details.currentPrice) }
      : {}),
    ...(error.fieldViolations.length > 0
      ? { errors: error.fieldViolations.map(({ field, message }) => ({ field, message })) }
      : {}),
  };
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** PRICE_CHANGED's price as the contract writes a PriceBreakdown (the domain's details are camelCase). */
function currentPriceJson(currentPrice: Record<string, unknown>): unknown {
  const snake = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(snake);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
        snake(item),
      ]),
    );
  };
  const price = snake(currentPrice) as {
    lines?: Record<string, unknown>[];
    discount?: unknown;
  };
  // Every nullable member present, as in a booking's price.
  return {
    ...price,
    lines: (price.lines ?? []).map((line) => ({ passenger_type: null, discount: null, ...line })),
    discount: price.discount ?? null,
  };
}

export function methodNotAllowed(method: string, allowed: string): DomainError {
  return new DomainError('VALIDATION_FAILED', `Method ${method} is not allowed here; use ${allowed}`, {
    details: { httpStatus: 405 },
  });
}

export function unsupportedMediaType(): DomainError {
  return new DomainError('VALIDATION_FAILED', 'Send the request body as application/json', {
    details: { httpStatus: 415 },
  });
}

/** A change sent without If-Match (RFC 6585): the caller must say which version it read, or `*` for any. */
export function preconditionRequired(): DomainError {
  return new DomainError(
    'VALIDATION_FAILED',
    "Send If-Match with the booking's ETag as last read, or * to change whatever version is current",
    {
      details: { httpStatus: 428 },
      fieldViolations: [{ field: 'If-Match', message: "is required: the booking's ETag as last read, or *" }],
    },
  );
}

/** Accepts a well-formed X-Request-Id or makes one; it is echoed back and carried by every log line. */
export function requestIdentity(): Koa.Middleware {
  return (context, next) => {
    const offered = context.get('X-Request-Id');
    const requestId = isWellFormedRequestId(offered) ? offered : crypto.randomUUID();
    context.state.requestId = requestId;
    context.set('X-Request-Id', requestId);
    // Log lines, the workflow update and its activities all name it from here on (src/observability).
    return runWithRequestId(requestId, next);
  };
}

/** One line per request with its id, method, path, status and duration; bodies and headers are never logged. */
export function accessLog(logger: Logger): Koa.Middleware {
  const lines = fixedFieldLogger(logger);
  return async (context, next) => {
    const started = performance.now();
    context.state.logger = logger;
    try {
      await next();
    } finally {
      // @koa/router leaves the template of the route it matched here (absent when none did).
      const route = (context as { _matchedRoute?: string | RegExp })._matchedRoute;
      if (route !== undefined) setServerSpanRoute(String(route));
      const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      // The request and trace ids first, as the logger's mixin puts them on every other line of the request.
      lines.info(
        {
          ...correlationFields(),
          method: context.method,
          path: context.path,
          status: context.status,
          durationMs,
        },
        'request',
      );
    }
  };
}

function retryAfterSeconds(error: DomainError): number | undefined {
  const value = error.details.retryAfterSeconds;
  return typeof value === 'number' ? value : undefined;
}

/**
 * Errors with an HTTP status from the libraries below (body parser, router, http-errors) become the
 * matching code, with messages of our own: theirs can quote the rejected input.
 */
function fromHttpError(thrown: unknown): DomainError | undefined {
  if (typeof thrown !== 'object' || thrown === null) return undefined;
  const error = thrown as { status?: unknown; statusCode?: unknown };
  const status = typeof error.status === 'number' ? error.status : error.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 599) return undefined;
  switch (status) {
    case 400:
      return new DomainError('VALIDATION_FAILED', 'The request is malformed');
    case 404:
      return new DomainError('NOT_FOUND', 'No such resource');
    case 413:
      return new DomainError('PAYLOAD_TOO_LARGE', 'The request body is too large');
    case 415:
      return unsupportedMediaType();
    default:
      return status < 500 ? new DomainError('VALIDATION_FAILED', 'The request cannot be served') : undefined;
  }
}

/** A problem document as a full response: status, the headers its code calls for, and the body. */
export function problemResponse(error: DomainError, instance: string, requestId: string): RestResponse {
  const body = problemBody(error, instance, requestId);
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  const retryAfter = retryAfterSeconds(error);
  if (retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(retryAfter)));
  const currentVersion = error.details.currentVersion;
  // A 412 tells the caller the version to read again, as the document's PreconditionFailed response promises.
  if (error.code === 'VERSION_MISMATCH' && typeof currentVersion === 'number') {
    headers.etag = `"${currentVersion}"`;
  }
  return { status: body.status, headers, body };
}

export function renderProblem(context: Koa.Context, error: DomainError): void {
  const response = problemResponse(error, context.path, String(context.state.requestId ?? ''));
  // RFC 9110 §15.5.2: every 401 carries a challenge; the token checks set a detailed one, anything else gets this.
  if (response.status === 401 && !context.response.get('WWW-Authenticate')) {
    response.headers['www-authenticate'] = `Bearer realm="${bearerRealm}"`;
  }
  sendResponse(context, response);
}

function unmatchedRouteError(context: Koa.Context): DomainError | undefined {
  if (context.body !== undefined && context.body !== null) return undefined;
  if (context.status === 404) return new DomainError('NOT_FOUND', `No resource at ${context.path}`);
  // The router answers 501 for methods it does not know at all; to a client that is the same as 405.
  if (context.status === 405 || context.status === 501) {
    const allowed = context.response.get('Allow');
    return methodNotAllowed(context.method, allowed || 'another method');
  }
  return undefined;
}

export function problemDetails(logger: Logger): Koa.Middleware {
  return async (context, next) => {
    try {
      await next();
      const unmatched = unmatchedRouteError(context);
      if (unmatched !== undefined) renderProblem(context, unmatched);
    } catch (thrown) {
      const error = findDomainError(thrown) ?? fromHttpError(thrown) ?? internalError(thrown);
      const requestLogger = (context.state.logger as Logger | undefined) ?? logger;
      if (error.code === 'INTERNAL') {
        requestLogger.error({ err: thrown, path: context.path }, 'request failed');
      } else if (error.code === 'UNAVAILABLE') {
        requestLogger.warn({ err: thrown, path: context.path }, 'dependency unavailable');
      }
      renderProblem(context, error);
    }
  };
}
