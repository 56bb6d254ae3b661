// Workflow interceptors: OpenTelemetry spans of runs, updates, timers and activity starts, and the request id they serve.
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { context as openTelemetryContext, ROOT_CONTEXT } from '@opentelemetry/api';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import {
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
} from '@temporalio/workflow';
import { requestIdHeader } from '../domain/request-correlation';
import { servedRequestId, servingRequest, sharedContextManager } from './shared-async-context';

/**
 * Span ids are drawn from the workflow's seeded random numbers, the same ones `uuid4()` draws passenger ids from.
 * A booking started before tracing existed must replay with the ids it was started with, so spans are made only
 * once this patch marker is in its history: from the start for new bookings, from their next live step for old ones.
 */
export const workflowSpansPatchId = 'opentelemetry-workflow-spans';

function workflowSpansOn(): boolean {
  return patched(workflowSpansPatchId);
}

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
    return workflowSpansOn() ? super.execute(input, next) : next(input);
  }

  override handleSignal(
    input: SignalInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>,
  ): Promise<void> {
    return workflowSpansOn() ? super.handleSignal(input, next) : next(input);
  }

  override handleUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>,
  ): Promise<unknown> {
    return workflowSpansOn() ? super.handleUpdate(input, next) : next(input);
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

/** StartActivity spans whose context the activity continues, and a span per durable timer (holds, departures). */
class BookingTracingOutbound extends OpenTelemetryOutboundInterceptor {
  override scheduleActivity(
    input: ActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>,
  ): Promise<unknown> {
    return workflowSpansOn() ? super.scheduleActivity(input, next) : next(input);
  }

  override scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ): Promise<unknown> {
    return workflowSpansOn() ? super.scheduleLocalActivity(input, next) : next(input);
  }

  startTimer(input: TimerInput, next: Next<WorkflowOutboundCallsInterceptor, 'startTimer'>): Promise<void> {
    if (!workflowSpansOn()) return next(input);
    return this.tracer.startActiveSpan(
      'Timer',
      { attributes: { 'temporal.timer.duration_ms': input.durationMs } },
      async (span) => {
        try {
          await next(input);
          span.setAttribute('temporal.timer.outcome', 'fired');
        } catch (error) {
          // A timer overtaken by a status change is cancelled: the normal way a hold ends when it is paid.
          span.setAttribute('temporal.timer.outcome', isCancellation(error) ? 'cancelled' : 'failed');
          throw error;
        } finally {
          span.end();
        }
      },
    );
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
