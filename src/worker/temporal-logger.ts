// Routes the Temporal SDK's log lines, native core included, into the pino logger, without payload data.
import {
  Runtime,
  type LogLevel,
  type LogMetadata,
  type Logger as TemporalLogger,
  type MetricsExporterConfig,
} from '@temporalio/worker';
import type { Logger } from '../logger';
import { currentTracing } from '../observability/tracing';

const pinoLevels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

export const payloadPlaceholder = '[payload]';

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The SDK's trace lines carry whole activations and activity tasks, whose payloads (`{ metadata, data }`)
 * are base64 JSON of workflow and activity arguments: names, emails, payment tokens. Key-based redaction
 * cannot see into them, so every payload's data is replaced; protobuf messages are walked as JSON.
 */
export function withoutPayloadData(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null || depth > 32) return value;
  if (value instanceof Error || value instanceof Date || ArrayBuffer.isView(value)) return value;
  if (Array.isArray(value)) return value.map((item) => withoutPayloadData(item, depth + 1));
  if (!isPlainObject(value)) {
    const toJson = (value as { toJSON?: unknown }).toJSON;
    return typeof toJson === 'function' ? withoutPayloadData(toJson.call(value), depth + 1) : value;
  }
  const isPayload = 'data' in value && 'metadata' in value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      isPayload && key === 'data' ? payloadPlaceholder : withoutPayloadData(child, depth + 1),
    ]),
  );
}

/** What the OpenTelemetry interceptors add to workflow and activity lines (snake_case, as our own lines). */
const traceFields = ['trace_id', 'span_id', 'trace_flags'] as const;

/**
 * `tracing: false` drops the trace ids the workflow interceptors add anyway (the workflow sandbox cannot know
 * whether this process exports spans): a trace id no backend holds would send operators looking for nothing.
 */
export function temporalLoggerFor(
  logger: Logger,
  options: { tracing: boolean } = { tracing: true },
): TemporalLogger {
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const pinoLevel = pinoLevels[level];
    if (!logger.isLevelEnabled(pinoLevel)) return;
    const fields: LogMetadata = { ...meta };
    if (!options.tracing) for (const field of traceFields) delete fields[field];
    logger[pinoLevel](withoutPayloadData(fields) as Record<string, unknown>, message);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}

/**
 * The native core's filter level for a pino level, never below INFO: the core's DEBUG and TRACE lines print
 * workflow and activity payloads (base64 JSON with names, emails and payment tokens), which no key-based
 * redaction can see.
 */
function coreLevelFor(level: string): LogLevel {
  const levels: Record<string, LogLevel> = { trace: 'INFO', debug: 'INFO', info: 'INFO', warn: 'WARN' };
  return levels[level] ?? 'ERROR';
}

/**
 * Call once, before any worker or connection exists: the SDK runtime is process-wide. It gets no signals of
 * its own: the process's shutdown handler stops the workers, also while it is still connecting. The native
 * core's lines are forwarded too: by default it prints to stderr itself, past the redacting logger.
 */
export function installTemporalRuntime(
  logger: Logger,
  /** The SDK's metrics exporter (the worker's metrics server serves what it exports). */
  metrics?: MetricsExporterConfig,
): void {
  Runtime.install({
    logger: temporalLoggerFor(logger.child({ component: 'temporal-sdk' }), {
      tracing: currentTracing().enabled,
    }),
    telemetryOptions: {
      logging: { forward: {}, filter: { core: coreLevelFor(logger.level), other: 'WARN' } },
      ...(metrics === undefined ? {} : { metrics }),
    },
    shutdownSignals: [],
  });
}
