// The one module that reaches into @temporalio/interceptors-opentelemetry's workflow-side files.
/*
 * Why private paths: the package's public entry point also loads its worker, client and plugin modules, Node code
 * the workflow sandbox cannot bundle. lib/workflow is the module the package's own plugin bundles into workflows;
 * loading it installs the globals OpenTelemetry needs in the sandbox (`performance`, `window`). The trace-header
 * helpers and the exporter that hands spans to the worker's sink are the package's wire format with its worker
 * side, so they are reused rather than copied. Types come from the public entry point.
 */
export { SPAN_DELIMITER, SpanName } from '@temporalio/interceptors-opentelemetry/lib/workflow';
export {
  extractContextFromHeaders,
  headersWithContext,
  UPDATE_ID_ATTR_KEY,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
export { SpanExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter';
