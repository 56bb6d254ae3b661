// Workflow spans that end by callbacks on the promise they trace and are handed to the worker as they end.
import {
  context as openTelemetryContext,
  propagation,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type ContextManager,
  type Exception,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { SpanExporter } from './package-internals';

/*
 * Why not the package's own helpers: its `instrument` wraps every traced call in three async functions, and its
 * span processor exports through a promise chain. Every promise a workflow makes costs the worker a captured stack
 * trace (the SDK records one per promise for the stack-trace query): the package's tracing made 106 of the 240
 * promises of a booked and paid booking. Here a span costs one promise, and the tracing of such a booking 15.
 */

/** Exports each sampled span as it ends, synchronously: the exporter hands it to the worker through a sink. */
class ExportAtEnd implements SpanProcessor {
  private readonly exporter = new SpanExporter();

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    this.exporter.export([span], () => undefined);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Module state is per workflow (the sandbox evaluates this module for each), so each has its own tracer. */
let tracer: Tracer | undefined;

/**
 * Registers this workflow's tracer provider with `contextManager` and the default trace-context propagator (which
 * the trace headers are read and written with). Named as the package names its workflow tracer, so the spans
 * look to an operator as the package's own would.
 */
export function startWorkflowTracing(contextManager: ContextManager): void {
  const provider = new BasicTracerProvider({ spanProcessors: [new ExportAtEnd()] });
  // Registering fails while another is registered: whatever the sandbox kept from an earlier workflow goes first.
  openTelemetryContext.disable();
  trace.disable();
  propagation.disable();
  provider.register({ contextManager });
  tracer = provider.getTracer('@temporalio/interceptor-workflow');
}

function workflowTracer(): Tracer {
  if (tracer === undefined) throw new Error('startWorkflowTracing was not called for this workflow');
  return tracer;
}

/** How a span records its outcome before it ends. */
export type SpanSettlement = (span: Span, failure?: { error: unknown }) => void;

/** The package's rule: status OK, or ERROR (UNSET for a benign failure) with the error recorded. */
export function settleWithStatus(acceptable?: (error: unknown) => boolean): SpanSettlement {
  return (span, failure) => {
    if (failure === undefined || acceptable?.(failure.error) === true) {
      span.setStatus({ code: SpanStatusCode.OK });
      return;
    }
    const { error } = failure;
    const benign =
      error instanceof ApplicationFailure && error.category === ApplicationFailureCategory.BENIGN;
    const { message } = (error ?? {}) as { message?: unknown };
    span.setStatus({
      code: benign ? SpanStatusCode.UNSET : SpanStatusCode.ERROR,
      message: typeof message === 'string' ? message : String(error),
    });
    span.recordException(error as Exception);
  };
}

export interface TracedOptions {
  /** The parent: a context read from the caller's headers, else the active one. */
  parent?: Context;
  attributes?: Attributes;
  settle?: SpanSettlement;
}

/**
 * Runs `work` in a new span and returns its promise untouched, so the caller resumes exactly when it would
 * untraced; the span ends from callbacks on that promise.
 */
export function traced<T>(name: string, work: () => Promise<T>, options: TracedOptions = {}): Promise<T> {
  const parent = options.parent ?? openTelemetryContext.active();
  const settle = options.settle ?? settleWithStatus();
  const span = workflowTracer().startSpan(name, { attributes: options.attributes }, parent);
  const end = (failure?: { error: unknown }) => {
    settle(span, failure);
    span.end();
  };
  let running: Promise<T>;
  try {
    running = openTelemetryContext.with(trace.setSpan(parent, span), work);
  } catch (error) {
    end({ error });
    throw error;
  }
  running.then(
    () => end(),
    (error: unknown) => end({ error }),
  );
  return running;
}
