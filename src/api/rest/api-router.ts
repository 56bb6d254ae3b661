// The /v1 and /api routes, built from the OpenAPI document: guard, user rate limit, body, validation, handler.
import Router, { type RouterMiddleware } from '@koa/router';
import type Koa from 'koa';
import type { Actor } from '../../domain/actor';
import { openApiOperations, type OpenApiOperation } from '../../contracts/openapi-document';
import { DomainError, validationFailed } from '../../domain/errors';
import type { IdempotencyStore } from './idempotency';
import {
  bookingProcessingResponse,
  idempotentOperationIds,
  type OperationHandler,
  type OperationRequest,
} from './operation-handlers';
import { compileRequestValidator, createOpenApiAjv } from './openapi-validation';
import { preconditionRequired } from './problem-details';
import { queryParametersOf } from './query-parameters';
import { jsonRequestBody } from './request-body';
import { sendResponse, type RestResponse } from './responses';

export interface ApiRouterDependencies {
  /** Handlers by canonical operationId; documented operations without one are served by other routers. */
  handlers: Readonly<Record<string, OperationHandler>>;
  /** Authenticates (unless the operation is public) and enforces the operation's scopes and roles. */
  operationGuard: (operationId: string) => Koa.Middleware;
  /** Absent when the per-user rate limit is off. */
  userRateLimit?: Koa.Middleware;
  idempotency: IdempotencyStore;
  bodyLimitBytes: number;
}

function prefixOf(operation: OpenApiOperation): string {
  return operation.path.startsWith('/api/') ? '/api' : '/v1';
}

/** The operations this router serves, each with the handler it runs. */
export function servedOperations(
  handlers: Readonly<Record<string, OperationHandler>>,
): { operation: OpenApiOperation; handler: OperationHandler }[] {
  return openApiOperations.flatMap((operation) => {
    const handler = handlers[operation.canonicalOperationId];
    return handler === undefined ? [] : [{ operation, handler }];
  });
}

/**
 * BOOKING_PROCESSING becomes 202 Accepted here, outside the idempotency store, which stores no retryable outcome:
 * a retry with the same Idempotency-Key takes the key over with its reserved booking id and gets the booking.
 * Any other error is thrown on.
 */
function bookingProcessingAnswer(error: unknown, prefix: string): RestResponse {
  if (!(error instanceof DomainError) || error.code !== 'BOOKING_PROCESSING') throw error;
  return bookingProcessingResponse(error, prefix);
}

/** The routers' two middleware, as a @koa/router Router gives them. */
export interface RouterMiddlewares {
  routes(): RouterMiddleware;
  allowedMethods(): RouterMiddleware;
}

/** A path's first two segments, lower-cased as the router matches: `/v1/routes/…` → `/v1/routes`. */
function resourceOf(path: string): string {
  const second = path.indexOf('/', 1);
  const third = second === -1 ? -1 : path.indexOf('/', second + 1);
  return (third === -1 ? path : path.slice(0, third)).toLowerCase();
}

/**
 * One router per resource, picked by the path's first two segments: a router tests every route it holds against
 * each request, so one router for every operation (and its /api twin) tested dozens of patterns per request.
 */
function byResource(routers: ReadonlyMap<string, Router>): RouterMiddlewares {
  const dispatch = (middlewareOf: (router: Router) => RouterMiddleware): RouterMiddleware => {
    const middleware = new Map([...routers].map(([resource, router]) => [resource, middlewareOf(router)]));
    return async (context, next) => {
      const chosen = middleware.get(resourceOf(context.path));
      await (chosen === undefined ? next() : chosen(context, next));
    };
  };
  return {
    routes: () => dispatch((router) => router.routes()),
    allowedMethods: () => dispatch((router) => router.allowedMethods()),
  };
}

export function createApiRouter(dependencies: ApiRouterDependencies): RouterMiddlewares {
  // Compiled once at start: parameters arrive as strings and are coerced, bodies are JSON and are not.
  const ajvs = { parameters: createOpenApiAjv({ coerceTypes: true }), bodies: createOpenApiAjv() };
  const routers = new Map<string, Router>();

  for (const { operation, handler } of servedOperations(dependencies.handlers)) {
    const validator = compileRequestValidator(operation, ajvs);
    const idempotent = idempotentOperationIds.has(operation.canonicalOperationId);
    const prefix = prefixOf(operation);

    const handle: RouterMiddleware = async (context) => {
      // 428 before any other check of the request: without If-Match nothing else about it matters yet.
      if (validator.requiresIfMatch && context.get('If-Match') === '') throw preconditionRequired();
      const { input, violations } = validator.validate({
        path: context.params,
        query: queryParametersOf(context),
        headers: context.headers,
        body: context.request.body,
      });
      if (violations.length > 0) throw validationFailed(violations);
      const actor = context.state.actor as Actor;
      const requestId = String(context.state.requestId);
      const receivedAt = context.state.receivedAt as number | undefined;
      // Named one by one: spreading objects of many shapes here was the costliest line of a cached read's profile.
      const request: OperationRequest = {
        actor,
        path: input.path,
        query: input.query,
        headers: input.headers,
        body: input.body,
        prefix,
      };
      if (receivedAt !== undefined) request.receivedAt = receivedAt;
      const key = input.headers['idempotency-key'];
      let response: RestResponse;
      try {
        response =
          idempotent && typeof key === 'string'
            ? await dependencies.idempotency.run(
                {
                  customerId: actor.userId,
                  key,
                  operationId: operation.canonicalOperationId,
                  ...dependencies.idempotency.fingerprintOf(
                    operation.canonicalOperationId,
                    input.path,
                    input.body,
                  ),
                  instance: context.path,
                  requestId,
                },
                (reservedId) => handler({ ...request, reservedId }),
              )
            : await handler(request);
      } catch (error) {
        response = bookingProcessingAnswer(error, prefix);
      }
      sendResponse(context, response);
    };

    const middleware: RouterMiddleware[] = [
      dependencies.operationGuard(operation.operationId),
      ...(dependencies.userRateLimit === undefined ? [] : [dependencies.userRateLimit]),
      ...(validator.requestBody === undefined
        ? []
        : [
            jsonRequestBody({
              limitBytes: dependencies.bodyLimitBytes,
              required: validator.requestBody.required,
            }),
          ]),
      handle,
    ];
    const resource = resourceOf(operation.routerPath);
    let router = routers.get(resource);
    if (router === undefined) {
      router = new Router();
      routers.set(resource, router);
    }
    router.register(operation.routerPath, [operation.method], middleware, {
      name: operation.operationId,
    });
  }
  return byResource(routers);
}
