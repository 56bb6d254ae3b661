// Entry point of the API process: REST (and gRPC) fronts over the application layer, against external services.
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { exitOnStartupFailure, onShutdownSignal } from '../runtime/process';
import { startApi } from './composition';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  const api = await startApi(config, logger);
  onShutdownSignal(logger, () => api.stop());
}

main().catch(exitOnStartupFailure(createLogger({ level: 'info', name: 'api' })));
