// Process lifecycle shared by the entry points: listening with a clear port-in-use message, and graceful shutdown.
import type { Server } from 'node:net';
import { logLinesWritten, type Logger } from '../logger';

export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    readonly variable: string,
  ) {
    super(`port ${port} is already in use: stop whatever holds it or set ${variable} to another port`);
    this.name = 'PortInUseError';
  }
}

/** Starts listening, turning EADDRINUSE into a message that names the setting to change. */
export function listen(
  server: Server,
  options: { host: string; port: number; variable: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(options.port, options.variable) : error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(options.port, options.host);
  });
}

/** Exits with `code` once the lines logged so far are written: the last lines are the ones an operator needs. */
export function exitOnceLogged(code: number): void {
  void logLinesWritten().then(() => process.exit(code));
}

/** Runs every shutdown step once on SIGINT or SIGTERM, then exits; a second signal exits at once. */
export function onShutdownSignal(logger: Logger, shutdown: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    shutdown()
      .then(() => exitOnceLogged(0))
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        exitOnceLogged(1);
      });
  };
  process.once('SIGINT', handle);
  process.once('SIGTERM', handle);
}

/** Logs a start-up failure in one readable line and exits non-zero, so operators see the cause first. */
export function exitOnStartupFailure(logger: Logger) {
  return (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    logger.fatal({ err: error }, `failed to start: ${message}`);
    exitOnceLogged(1);
  };
}
