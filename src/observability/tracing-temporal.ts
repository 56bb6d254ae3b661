// Temporal's side of tracing and request ids: the API client's interceptors, the worker's activity interceptors and sink.
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { correlationActivityInterceptors, requestIdClientInterceptor } from './request-context';
import { currentTracing } from './tracing';

/**
 * Spans around starts, updates, signals and queries whose context travels in the Temporal headers, and the request
 * id beside it. With tracing off the spans are no-ops; the request id travels regardless.
 */
export function temporalClientInterceptors(): WorkflowClientInterceptor[] {
  return [new OpenTelemetryWorkflowClientInterceptor(), requestIdClientInterceptor()];
}

/** RunActivity spans under the workflow's StartActivity, then the request id and trace ids for the activity's lines. */
export function temporalActivityInterceptors(): ActivityInterceptorsFactory[] {
  return [
    (context) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(context),
      outbound: new OpenTelemetryActivityOutboundInterceptor(context),
    }),
    correlationActivityInterceptors,
  ];
}

/**
 * The sink the workflow interceptors (src/workflows/tracing/interceptors.ts) hand finished spans to: the sandbox cannot
 * export, so its spans leave through the process's span processor. Always installed, since the bundle always
 * carries the interceptors; with tracing off the spans are dropped here.
 */
export function workflowSpanSinks(): InjectedSinks<OpenTelemetrySinks> {
  const tracing = currentTracing();
  return { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) };
}
