// API process for the multi-process tests: src/api/composition's startApi, as main.ts runs it, on the test's queues.
//
// Started by startApiProcess (api-process.ts), which documents its environment variables.
import { startApi } from '../../src/api/composition';
import { createLogger } from '../../src/logger';
import { onShutdownSignal } from '../../src/runtime/process';
import type { TaskQueueNames } from '../../src/domain/task-queues';
import { apiProcessReadyLine, apiProcessVariables } from './api-process';
import { testConfig } from './database';
import { findFreePort } from './ports';
import { fastSagaTimings } from './saga';

function requiredVariable(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

async function main(): Promise<void> {
  const [httpPort, grpcPort] = [await findFreePort(), await findFreePort()];
  const config = testConfig({
    ...(JSON.parse(requiredVariable(apiProcessVariables.configuration)) as Record<string, string>),
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(httpPort),
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    GRPC_INSECURE: 'true',
    GRPC_SHUTDOWN_GRACE_MS: '1000',
  });
  const taskQueues = JSON.parse(requiredVariable(apiProcessVariables.taskQueues)) as TaskQueueNames;
  const logger = createLogger({ level: config.logLevel, name: 'api-process' });
  // The test's workers poll queues of their own; the API starts its workflows there, with the saga tests' timings.
  const api = await startApi(config, logger, { taskQueues, timings: fastSagaTimings });
  onShutdownSignal(logger, () => api.stop());
  process.stdout.write(`${apiProcessReadyLine} ${api.httpPort} ${api.grpcPort}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `api process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
