// The request id and trace ids of the work in progress: what every log line carries, and how Temporal headers carry it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { ActivityInterceptors, ActivityInterceptorsFactory } from '@temporalio/worker';
import { requestIdHeader } from '../domain/request-correlation';

const requestIds = new AsyncLocalStorage<string>();

/** Runs `work` (and everything it starts, across awaits) as part of the request with this id. */
export function runWithRequestId<T>(requestId: string, work: () => T): T {
  return requestIds.run(requestId, work);
}

export function currentRequestId(): string | undefined {
  return requestIds.getStore();
}

/** The log fields naming the request and the active span; empty outside a request and when nothing is traced. */
export interface CorrelationFields {
  request_id?: string;
  trace_id?: string;
  span_id?: string;
}

/** The fields of the current context: pino's mixin adds them to every line written while a request runs. */
export function correlationFields(): CorrelationFields {
  const fields: CorrelationFields = {};
  const requestId = requestIds.getStore();
  if (requestId !== undefined) fields.request_id = requestId;
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (spanContext !== undefined && isSpanContextValid(spanContext)) {
    fields.trace_id = spanContext.traceId;
    fields.span_id = spanContext.spanId;
  }
  return fields;
}

/** `headers` plus the current request id, when there is one. */
export function withRequestIdHeader(headers: Headers): Headers {
  const requestId = requestIds.getStore();
  return requestId === undefined
    ? headers
    : { ...headers, [requestIdHeader]: defaultPayloadConverter.toPayload(requestId) };
}

export function requestIdFromHeaders(headers: Headers): string | undefined {
  const payload = headers[requestIdHeader];
  if (payload === undefined) return undefined;
  const value: unknown = defaultPayloadConverter.fromPayload(payload);
  return typeof value === 'string' ? value : undefined;
}

/** On the API's Temporal client: each start, update, signal and query carries the request id to the workflow. */
export function requestIdClientInterceptor(): WorkflowClientInterceptor {
  return {
    start: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    startWithDetails: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    startUpdate: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    startUpdateWithStart: (input, next) =>
      next({
        ...input,
        workflowStartHeaders: withRequestIdHeader(input.workflowStartHeaders),
        updateHeaders: withRequestIdHeader(input.updateHeaders),
      }),
    signal: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    signalWithStart: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    query: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
  };
}

/**
 * On the worker, after the OpenTelemetry activity interceptors: the activity runs as part of the request its
 * header names, and the SDK's own lines about it ("Activity completed", "Activity failed", written after the
 * activity's span and context have closed) still carry the request and trace ids it ran under.
 */
export const correlationActivityInterceptors: ActivityInterceptorsFactory = (): ActivityInterceptors => {
  let fields: CorrelationFields = {};
  return {
    inbound: {
      execute(input, next) {
        const requestId = requestIdFromHeaders(input.headers);
        const run = () => {
          fields = correlationFields();
          return next(input);
        };
        return requestId === undefined ? run() : runWithRequestId(requestId, run);
      },
    },
    outbound: {
      getLogAttributes: (input, next) => next({ ...fields, ...input }),
    },
  };
};
