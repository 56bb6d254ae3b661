// OpenTelemetry tracing of one process: the Node SDK with the HTTP, gRPC and pg instrumentations, exporting OTLP.
import { context, diag, DiagLogLevel, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import {
  detectResourcesSync,
  hostDetectorSync,
  processDetectorSync,
  Resource,
} from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NoopSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { ConfigError, loadTracingConfig, type TracingConfig } from '../config';

/** The tracing of this process: where finished spans go (the workflow span sink needs it too) and its stop. */
export interface Tracing {
  readonly enabled: boolean;
  readonly spanProcessor: SpanProcessor;
  readonly resource: Resource;
  /** Exports the spans still buffered and stops; call last on shutdown. */
  shutdown(): Promise<void>;
}

const disabledTracing: Tracing = {
  enabled: false,
  spanProcessor: new NoopSpanProcessor(),
  resource: Resource.empty(),
  shutdown: () => Promise.resolve(),
};

let activeTracing: Tracing = disabledTracing;

function samplerFor(config: Pick<TracingConfig, 'sampler' | 'samplerRatio'>): Sampler {
  const roots: Record<string, Sampler> = {
    always_on: new AlwaysOnSampler(),
    always_off: new AlwaysOffSampler(),
    traceidratio: new TraceIdRatioBasedSampler(config.samplerRatio),
  };
  const [parentBased, root] = config.sampler.startsWith('parentbased_')
    ? [true, config.sampler.slice('parentbased_'.length)]
    : [false, config.sampler];
  const sampler = roots[root] ?? new AlwaysOnSampler();
  return parentBased ? new ParentBasedSampler({ root: sampler }) : sampler;
}

/** Probes and scrapes would fill the trace store with traces nobody reads. */
const untracedPaths = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Starts the SDK once per process, before the instrumented libraries are first required (see tracing-start-*.ts):
 * the instrumentations patch Koa, pg and gRPC as they load. Off, nothing is patched and spans go nowhere.
 */
export function startTracing(config: TracingConfig, defaultServiceName: string): Tracing {
  if (activeTracing.enabled || !config.enabled) return activeTracing;
  const resource = new Resource({
    ...config.resourceAttributes,
    [ATTR_SERVICE_NAME]: config.serviceName ?? defaultServiceName,
  }).merge(detectResourcesSync({ detectors: [hostDetectorSync, processDetectorSync] }));
  const spanProcessor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: config.endpoint, headers: config.headers }),
  );
  const sdk = new NodeSDK({
    resource,
    autoDetectResources: false,
    spanProcessors: [spanProcessor],
    sampler: samplerFor(config),
    // Only traces are configured here; without this the SDK would also start an OTLP log exporter by default.
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => untracedPaths.has((request.url ?? '').split('?')[0] ?? ''),
      }),
      // Health checks of Temporal and of the API itself run every few seconds, outside any request.
      new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
      // Statement text only, never parameter values (names, emails); pool upkeep outside a request is not traced.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    ],
  });
  sdk.start();
  activeTracing = {
    enabled: true,
    spanProcessor,
    resource: Resource.default().merge(resource),
    shutdown: async () => {
      activeTracing = disabledTracing;
      await sdk.shutdown();
    },
  };
  return activeTracing;
}

/**
 * What the entry points' first import runs. A malformed OTEL_* variable leaves tracing off here; the entry point's
 * loadConfig then stops the process with the same message, the way every other bad setting does.
 */
export function startTracingFromEnvironment(defaultServiceName: string): void {
  let config: TracingConfig;
  try {
    config = loadTracingConfig();
  } catch (error) {
    if (error instanceof ConfigError) return;
    throw error;
  }
  startTracing(config, defaultServiceName);
}

export function currentTracing(): Tracing {
  return activeTracing;
}

/**
 * Names the HTTP server span after the route template that served the request (`POST /v1/bookings/:booking_id/
 * payment`, attribute `http.route`), as the Koa instrumentation would: @opentelemetry/instrumentation-koa 0.47
 * patches Koa 2 only, and the 0.5x releases that know Koa 3 need the OpenTelemetry 2.x line.
 */
export function setServerSpanRoute(route: string): void {
  const metadata = getRPCMetadata(context.active());
  if (metadata?.type === RPCType.HTTP) metadata.route = route;
}

/** The SDK's own complaints (a collector that cannot be reached, spans dropped) go to the process's log. */
export function logTracingDiagnostics(logger: {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}): void {
  if (!activeTracing.enabled) return;
  const component = { component: 'opentelemetry' };
  diag.setLogger(
    {
      error: (message, ...details) => logger.error({ ...component, details }, message),
      warn: (message, ...details) => logger.warn({ ...component, details }, message),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}

/**
 * Wraps each named method of a port (a payment gateway, an email or SMS sender) in a client span, for calls no
 * HTTP or SQL span covers: an SMTP exchange, a simulator in PostgreSQL. Arguments are never recorded: they hold
 * card tokens, addresses and messages.
 */
export function withClientSpans<T extends object>(
  port: T,
  portName: string,
  methods: readonly (keyof T & string)[],
): T {
  const tracer = trace.getTracer('bus-booking');
  const traced: Partial<T> = {};
  for (const method of methods) {
    const original = port[method];
    if (typeof original !== 'function') throw new TypeError(`${portName}.${method} is not a function`);
    const call = (original as (...args: unknown[]) => Promise<unknown>).bind(port);
    traced[method] = ((...args: unknown[]) =>
      tracer.startActiveSpan(
        `${portName}.${method}`,
        { kind: SpanKind.CLIENT, attributes: { 'peer.service': portName } },
        async (span) => {
          try {
            return await call(...args);
          } catch (error) {
            // The error's name only: provider messages can quote what was sent.
            span.setStatus({
              code: SpanStatusCode.ERROR,
              message: error instanceof Error ? error.name : 'error',
            });
            throw error;
          } finally {
            span.end();
          }
        },
      )) as T[keyof T & string];
  }
  return Object.assign(Object.create(port) as T, traced);
}
