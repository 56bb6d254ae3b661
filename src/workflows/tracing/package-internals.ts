// The one module that reaches into @temporalio/interceptors-opentelemetry's workflow-side files.
/*
 * Why private paths: the trace-header helpers and the exporter that hands spans to the worker's sink are not
 * exported by the package's entry point, and they are its wire format with its worker side (header name and
 * encoding, the serialized span), so they are reused rather than copied. The span names come from lib/workflow,
 * the module the package's own plugin bundles into workflows; loading it also installs the globals OpenTelemetry
 * needs in the sandbox (`performance`, `window`). The entry point would give the same names but also load the
 * package's plugin into every workflow bundle (the bundler stubs out its worker and client modules).
 */
export { SPAN_DELIMITER, SpanName } from '@temporalio/interceptors-opentelemetry/lib/workflow';
export {
  extractContextFromHeaders,
  headersWithContext,
  UPDATE_ID_ATTR_KEY,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
export { SpanExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter';
