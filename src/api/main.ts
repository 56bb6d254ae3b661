// Entry point of the API process: REST (and gRPC) fronts over the application layer, against external services.
import http from 'node:http';
import { Connection } from '@temporalio/client';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { createDatabase } from '../db/connection';
import { createReadinessCheck } from '../application/readiness';
import { createRestApp } from './rest/app';
import { exitOnStartupFailure, listen, onShutdownSignal } from '../runtime/process';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  const database = createDatabase(config.database.url, { poolSize: config.database.poolSize });
  // Lazy, so the API starts (and /readyz reports why it is not ready) while Temporal is still coming up.
  const temporal = Connection.lazy({ address: config.temporal.address });
  const app = createRestApp({ logger, checkReadiness: createReadinessCheck({ database, temporal }) });

  const server = http.createServer(app.callback());
  server.requestTimeout = config.http.requestTimeoutMs;
  await listen(server, { host: config.http.host, port: config.http.port, variable: 'HTTP_PORT' });
  logger.info({ port: config.http.port }, 'REST API listening');

  onShutdownSignal(logger, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([database.destroy(), temporal.close()]);
  });
}

main().catch(exitOnStartupFailure(createLogger({ level: 'info', name: 'api' })));
