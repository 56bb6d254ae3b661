// The process-wide structured logger (pino); sensitive fields are redacted before any line is written.
import pino, { type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { LogFormat, LogLevel } from './config';
import { correlationFields } from './observability/request-context';
import { redactSensitive, sensitiveLogKeys } from './security/sensitive-fields';

export type { Logger };

/** Field names whose values never reach a log line, wherever they appear: derived from the contracts' marks. */
export const redactedFieldNames: readonly string[] = [...sensitiveLogKeys].sort();

/**
 * A log line's own top-level `method` is the HTTP method or gRPC path it is about. The contracts' sensitive
 * `method` (a masked payment method) lives inside a payment object, where it is still redacted.
 */
const logContextKeys: ReadonlySet<string> = new Set(['method']);

const redactLogObject = <T>(object: T): T => redactSensitive(object, logContextKeys);

/** Lines gathered this long at most before they are written, when fewer than a chunk's worth arrive. */
const logFlushIntervalMs = 200;

/** Linux's PIPE_BUF: a write to a pipe of at most this many bytes is never split or mixed with another writer's. */
const atomicPipeWriteBytes = 4096;

let bufferedOutput: ReturnType<typeof pino.destination> | undefined;

/** The destinations that are this process's standard output, whose terminal (or not) picks the default format. */
const standardOutputs = new WeakSet<DestinationStream>();

/** LOG_FORMAT when set; otherwise pretty for a person at a terminal, JSON for a pipe, a file or a collector. */
export function logFormatFor(configured: LogFormat | undefined, writesToTerminal: boolean): LogFormat {
  return configured ?? (writesToTerminal ? 'pretty' : 'json');
}

/**
 * Formats each line as it is written, synchronously, so pretty lines keep the order, the chunking and the flush on
 * exit of the destination they go to.
 */
function prettyLines(destination: DestinationStream): DestinationStream {
  const prettify = prettyFactory({ translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return { write: (line: string) => destination.write(prettify(line)) };
}

/**
 * Standard output, written in chunks of whole lines instead of a line at a time. A write per line cost the API a
 * fifth of its CPU per request at full load (each wakes the reader of the pipe: the supervisor, the container
 * runtime), and a synchronous write to a full pipe stalls the whole event loop. Chunks stay within one atomic pipe
 * write, so processes sharing one output (`npm start`) never interleave mid-line. pino writes what is buffered when
 * the process exits, though not a chunk still in flight: deliberate exits wait for `logLinesWritten` first. One per
 * process, so that every logger's lines keep their order.
 */
function bufferedStandardOutput(): DestinationStream {
  bufferedOutput ??= pino.destination({
    dest: 1,
    sync: false,
    minLength: atomicPipeWriteBytes - 1024,
    maxWrite: atomicPipeWriteBytes,
    periodicFlush: logFlushIntervalMs,
  });
  standardOutputs.add(bufferedOutput);
  return bufferedOutput;
}

/** Waits this long at most for the lines already logged to be written before a deliberate exit. */
const exitFlushTimeoutMs = 2_000;

/**
 * Resolves once every line logged so far has left the process, or after a bounded wait when nobody reads the
 * output. pino's exit hook writes what is buffered but cannot wait for a chunk whose write is in flight (one
 * retried because the reader lags): exiting then loses that chunk, or writes it after the lines logged later.
 */
export function logLinesWritten(): Promise<void> {
  const output = bufferedOutput;
  if (!output) return Promise.resolve();
  return new Promise((resolve) => {
    const giveUp = setTimeout(resolve, exitFlushTimeoutMs);
    output.flush(() => {
      clearTimeout(giveUp);
      resolve();
    });
  });
}

/** For a process that also writes to standard output itself and needs its lines in order with those writes. */
export function synchronousStandardOutput(): DestinationStream {
  const output = pino.destination({ dest: 1, sync: true });
  standardOutputs.add(output);
  return output;
}

/**
 * Redaction walks every logged object, child bindings and errors included, at any depth, because pino's
 * path-based `redact` only reaches the depths it is told about and would miss
 * `booking.passengers[3].first_name`. Lines are JSON unless `format` or a terminal on standard output says
 * pretty; another destination (a file, a test's capture) gets JSON unless `format` says otherwise.
 */
export function createLogger(
  options: { level: LogLevel; name: string; format?: LogFormat | undefined },
  destination: DestinationStream = bufferedStandardOutput(),
): Logger {
  const toTerminal = standardOutputs.has(destination) && process.stdout.isTTY === true;
  const output =
    logFormatFor(options.format, toTerminal) === 'pretty' ? prettyLines(destination) : destination;
  const settings: pino.LoggerOptions = {
    name: options.name,
    level: options.level,
    formatters: { log: redactLogObject },
    // Every line written while a request runs names it (request_id) and, when traced, its trace and span.
    mixin: correlationFields,
    // Errors were already turned into redacted plain objects by the log formatter.
    serializers: { err: (value: unknown) => (value instanceof Error ? redactLogObject(value) : value) },
  };
  const logger = pino(settings, output);
  // pino skips formatters for child bindings; children inherit these overrides through their prototype.
  const { child, setBindings } = Object.getPrototypeOf(logger) as {
    child: (this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => Logger;
    setBindings: (this: Logger, bindings: pino.Bindings) => void;
  };
  Object.assign(logger, {
    child(this: Logger, bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) {
      return child.call(this, redactLogObject(bindings), childOptions);
    },
    setBindings(this: Logger, bindings: pino.Bindings) {
      setBindings.call(this, redactLogObject(bindings));
    },
  });
  return logger;
}

/**
 * A logger writing where `logger` writes, at its level and with its bindings, for a line whose fields are fixed and
 * never sensitive (the access line, one per request): it skips the redaction walk and the correlation mixin, whose
 * share of a cached read's CPU was a tenth, so its caller names the request and trace itself.
 */
export function fixedFieldLogger(logger: Logger): Logger {
  const destination = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  return pino({ level: logger.level }, destination).child(logger.bindings());
}
