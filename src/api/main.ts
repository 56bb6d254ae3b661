// Entry point of the API process: REST (and gRPC) fronts over the application layer, against external services.
// First: tracing must start before the imports below load Koa, pg and gRPC.
import '../observability/tracing-start-api';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { currentTracing, logTracingDiagnostics } from '../observability/tracing';
import { exitOnStartupFailure, onShutdownSignal } from '../runtime/process';
import { startApi } from './composition';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, name: 'api', format: config.logFormat });
  logTracingDiagnostics(logger);
  const api = await startApi(config, logger);
  onShutdownSignal(logger, async () => {
    await api.stop();
    await currentTracing().shutdown();
  });
}

main().catch(exitOnStartupFailure(createLogger({ level: 'info', name: 'api' })));
