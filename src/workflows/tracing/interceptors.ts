// Workflow interceptors: OpenTelemetry spans of runs, updates, signals, timers and activity starts, and the request id they serve.
import { context as openTelemetryContext, isSpanContextValid, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import {
  ContinueAsNew,
  isCancellation,
  log,
  type ActivityInput,
  type GetLogAttributesInput,
  type LocalActivityInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
  workflowInfo,
} from '@temporalio/workflow';
import { requestIdHeader } from '../../domain/request-correlation';
import {
  extractContextFromHeaders,
  headersWithContext,
  SPAN_DELIMITER,
  SpanName,
  UPDATE_ID_ATTR_KEY,
} from './package-internals';
import { servedRequestId, servingRequest, sharedContextManager } from './shared-async-context';
import { settleWithStatus, startWorkflowTracing, traced, type SpanSettlement } from './workflow-spans';

function spanName(kind: SpanName, subject: string): string {
  return `${kind}${SPAN_DELIMITER}${subject}`;
}

const runSettlement = settleWithStatus((error) => error instanceof ContinueAsNew);

/**
 * The run, its updates and signals in spans under the caller's span from the headers. Validators and queries get
 * none: validators do not run on replay and queries are not in the history, so random numbers drawn there (span
 * ids come from the workflow's seeded random numbers) would shift every id drawn after them between the first
 * run and a replay.
 */
const tracingInbound: WorkflowInboundCallsInterceptor = {
  execute: (input, next) =>
    traced(spanName(SpanName.WORKFLOW_EXECUTE, workflowInfo().workflowType), () => next(input), {
      parent: extractContextFromHeaders(input.headers),
      settle: runSettlement,
    }),
  handleSignal: (input, next) =>
    traced(spanName(SpanName.WORKFLOW_HANDLE_SIGNAL, input.signalName), () => next(input), {
      parent: extractContextFromHeaders(input.headers),
    }),
  handleUpdate: (input, next) =>
    traced(spanName(SpanName.WORKFLOW_HANDLE_UPDATE, input.name), () => next(input), {
      parent: extractContextFromHeaders(input.headers),
      attributes: { [UPDATE_ID_ATTR_KEY]: input.updateId },
    }),
};

/** A timer's span says how the wait ended: a timer overtaken by a status change is cancelled, the normal end of a paid hold. */
const timerSettlement: SpanSettlement = (span, failure) =>
  span.setAttribute(
    'temporal.timer.outcome',
    failure === undefined ? 'fired' : isCancellation(failure.error) ? 'cancelled' : 'failed',
  );

/** A StartActivity span, whose context the activity continues from its headers (local activities alike). */
function tracedActivityStart<Input extends ActivityInput | LocalActivityInput>(
  input: Input,
  next: (input: Input) => Promise<unknown>,
): Promise<unknown> {
  return traced(spanName(SpanName.ACTIVITY_START, input.activityType), () =>
    next({ ...input, headers: headersWithContext(input.headers) }),
  );
}

/** The active span's ids on each workflow log line, as the package writes them, so logs and traces join up. */
function withTraceIds(input: GetLogAttributesInput): GetLogAttributesInput {
  const spanContext = trace.getSpan(openTelemetryContext.active())?.spanContext();
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return input;
  return {
    trace_id: spanContext.traceId,
    span_id: spanContext.spanId,
    trace_flags: `0${spanContext.traceFlags.toString(16)}`,
    ...input,
  };
}

/**
 * StartActivity spans whose context the activity continues, a span per durable timer (holds, departures), and the
 * trace ids on log lines.
 */
const tracingOutbound: WorkflowOutboundCallsInterceptor = {
  scheduleActivity: (input, next) => tracedActivityStart(input, next),
  scheduleLocalActivity: (input, next) => tracedActivityStart(input, next),
  startTimer: (input, next) =>
    traced('Timer', () => next(input), {
      attributes: { 'temporal.timer.duration_ms': input.durationMs },
      settle: timerSettlement,
    }),
  getLogAttributes: (input, next) => next(withTraceIds(input)),
};

function requestIdOf(headers: Headers): string | undefined {
  const payload = headers[requestIdHeader];
  if (payload === undefined) return undefined;
  const value: unknown = defaultPayloadConverter.fromPayload(payload);
  return typeof value === 'string' ? value : undefined;
}

function servingRequestOf<T>(headers: Headers, work: () => T): T {
  const requestId = requestIdOf(headers);
  return requestId === undefined ? work() : servingRequest(requestId, work);
}

/**
 * One line per update handled, written as part of its request: the line that ties a request id to the booking.
 * The handler's own promise is returned untouched: wrapping it would add a microtask before the update completes,
 * and the order of completions within a workflow task is part of what a replay must reproduce.
 */
function loggingOutcome(update: string, handled: Promise<unknown>): Promise<unknown> {
  handled.then(
    () => log.info('update handled', { update, outcome: 'completed' }),
    () => log.info('update handled', { update, outcome: 'failed' }),
  );
  return handled;
}

const requestIdInbound: WorkflowInboundCallsInterceptor = {
  execute: (input, next) => servingRequestOf(input.headers, () => next(input)),
  handleUpdate: (input, next) =>
    servingRequestOf(input.headers, () => loggingOutcome(input.name, next(input))),
  handleSignal: (input, next) => servingRequestOf(input.headers, () => next(input)),
};

function withServedRequestId(headers: Headers): Headers {
  const requestId = servedRequestId();
  return requestId === undefined
    ? headers
    : { ...headers, [requestIdHeader]: defaultPayloadConverter.toPayload(requestId) };
}

const requestIdOutbound: WorkflowOutboundCallsInterceptor = {
  scheduleActivity: (input, next) => next({ ...input, headers: withServedRequestId(input.headers) }),
  scheduleLocalActivity: (input, next) => next({ ...input, headers: withServedRequestId(input.headers) }),
  getLogAttributes(input: GetLogAttributesInput, next) {
    const requestId = servedRequestId();
    return next(requestId === undefined ? input : { request_id: requestId, ...input });
  },
};

/**
 * Made for each workflow: its tracer, registered with a context manager over the one storage all workflows of the
 * V8 context share (see shared-async-context.ts for the cost a storage per workflow would have).
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  startWorkflowTracing(sharedContextManager(ROOT_CONTEXT));
  return {
    inbound: [tracingInbound, requestIdInbound],
    outbound: [tracingOutbound, requestIdOutbound],
  };
};
