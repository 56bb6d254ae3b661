// Workflow interceptors: OpenTelemetry spans of runs, updates, timers and activity starts, and the request id they serve.
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
  SPAN_DELIMITER,
  SpanName,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import {
  extractContextFromHeaders,
  headersWithContext,
  UPDATE_ID_ATTR_KEY,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { context as openTelemetryContext, ROOT_CONTEXT } from '@opentelemetry/api';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import {
  ContinueAsNew,
  isCancellation,
  log,
  patched,
  type ActivityInput,
  type GetLogAttributesInput,
  type LocalActivityInput,
  type Next,
  type SignalInput,
  type TimerInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
  workflowInfo,
} from '@temporalio/workflow';
import { requestIdHeader } from '../domain/request-correlation';
import { servedRequestId, servingRequest, sharedContextManager } from './shared-async-context';
import { settleWithStatus, traced, type SpanSettlement } from './workflow-spans';

/**
 * Span ids are drawn from the workflow's seeded random numbers, the same ones `uuid4()` draws passenger ids from.
 * A booking started before tracing existed must replay with the ids it was started with, so spans are made only
 * once this patch marker is in its history: from the start for new bookings, from their next live step for old ones.
 */
export const workflowSpansPatchId = 'opentelemetry-workflow-spans';

/**
 * Patch id: workflow spans wrap the traced call in one promise (see workflow-spans.ts) instead of the package's
 * async wrappers. Those wrappers delay by a few microtasks when the workflow resumes after what they trace, and
 * that order is part of what a replay must reproduce: a booking started before this change keeps the package's
 * spans while it replays, and takes these from its next live step on.
 */
export const spansWithoutWrappersPatchId = 'workflow-spans-without-wrappers';

/** Which spans this step of the workflow makes: none (started before tracing), the package's, or ours. */
type WorkflowSpans = 'none' | 'package' | 'own';

function workflowSpans(): WorkflowSpans {
  if (!patched(workflowSpansPatchId)) return 'none';
  return patched(spansWithoutWrappersPatchId) ? 'own' : 'package';
}

function spanName(kind: SpanName, subject: string): string {
  return `${kind}${SPAN_DELIMITER}${subject}`;
}

const runSettlement = settleWithStatus((error) => error instanceof ContinueAsNew);

/**
 * The run, its updates and signals in spans under the caller's span from the headers. Validators and queries get
 * none: validators do not run on replay and queries are not in the history, so random numbers drawn there would
 * shift every id drawn after them between the first run and a replay.
 */
class BookingTracingInbound extends OpenTelemetryInboundInterceptor {
  override execute(
    input: WorkflowExecuteInput,
    next: Next<WorkflowInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    const spans = workflowSpans();
    if (spans === 'none') return next(input);
    if (spans === 'package') return super.execute(input, next);
    return traced(spanName(SpanName.WORKFLOW_EXECUTE, workflowInfo().workflowType), () => next(input), {
      parent: extractContextFromHeaders(input.headers),
      settle: runSettlement,
    });
  }

  override handleSignal(
    input: SignalInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>,
  ): Promise<void> {
    const spans = workflowSpans();
    if (spans === 'none') return next(input);
    if (spans === 'package') return super.handleSignal(input, next);
    return traced(spanName(SpanName.WORKFLOW_HANDLE_SIGNAL, input.signalName), () => next(input), {
      parent: extractContextFromHeaders(input.headers),
    });
  }

  override handleUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>,
  ): Promise<unknown> {
    const spans = workflowSpans();
    if (spans === 'none') return next(input);
    if (spans === 'package') return super.handleUpdate(input, next);
    return traced(spanName(SpanName.WORKFLOW_HANDLE_UPDATE, input.name), () => next(input), {
      parent: extractContextFromHeaders(input.headers),
      attributes: { [UPDATE_ID_ATTR_KEY]: input.updateId },
    });
  }

  override validateUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>,
  ): void {
    next(input);
  }

  override handleQuery(
    input: Parameters<NonNullable<WorkflowInboundCallsInterceptor['handleQuery']>>[0],
    next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>,
  ): Promise<unknown> {
    return next(input);
  }
}

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

/** StartActivity spans whose context the activity continues, and a span per durable timer (holds, departures). */
class BookingTracingOutbound extends OpenTelemetryOutboundInterceptor {
  override scheduleActivity(
    input: ActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>,
  ): Promise<unknown> {
    const spans = workflowSpans();
    if (spans === 'none') return next(input);
    if (spans === 'package') return super.scheduleActivity(input, next);
    return tracedActivityStart(input, next);
  }

  override scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ): Promise<unknown> {
    const spans = workflowSpans();
    if (spans === 'none') return next(input);
    if (spans === 'package') return super.scheduleLocalActivity(input, next);
    return tracedActivityStart(input, next);
  }

  startTimer(input: TimerInput, next: Next<WorkflowOutboundCallsInterceptor, 'startTimer'>): Promise<void> {
    const spans = workflowSpans();
    if (spans === 'none') return next(input);
    const attributes = { 'temporal.timer.duration_ms': input.durationMs };
    if (spans === 'own') {
      return traced('Timer', () => next(input), { attributes, settle: timerSettlement });
    }
    return this.tracer.startActiveSpan('Timer', { attributes }, async (span) => {
      try {
        await next(input);
        timerSettlement(span);
      } catch (error) {
        timerSettlement(span, { error });
        throw error;
      } finally {
        span.end();
      }
    });
  }
}

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
 * Made for each workflow. The package's interceptors register a context manager of their own per workflow, each
 * with its own AsyncLocalStorage; the one shared storage replaces it (see shared-async-context.ts for the cost it
 * avoids). Theirs is never used, so its storage is never enabled. Spans, their parents and the trace headers are
 * unchanged: the tracer reads the active context through the registered manager.
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  const tracingInbound = new BookingTracingInbound();
  const tracingOutbound = new BookingTracingOutbound();
  openTelemetryContext.disable();
  openTelemetryContext.setGlobalContextManager(sharedContextManager(ROOT_CONTEXT));
  return {
    inbound: [tracingInbound, requestIdInbound],
    outbound: [tracingOutbound, requestIdOutbound],
    internals: [new OpenTelemetryInternalsInterceptor()],
  };
};
