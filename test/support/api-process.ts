// API process for the multi-process tests: the REST and gRPC fronts over their own pool and Temporal client.
//
// Started by startApiProcess (api-process-launcher.ts), which documents its environment variables.
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type { JWK } from 'jose';
import { startGrpcServer } from '../../src/api/grpc/server';
import { createRestApp, restSettingsFromConfig } from '../../src/api/rest/app';
import { createIdempotencyStore } from '../../src/api/rest/idempotency';
import { createRestServer } from '../../src/api/rest/server';
import { createBookingApplication } from '../../src/application/bookings';
import { createCatalogApplication } from '../../src/application/catalog';
import { createReadinessCheck } from '../../src/application/readiness';
import { createUserApplication } from '../../src/application/users';
import { createDatabase } from '../../src/db/connection';
import { createLogger } from '../../src/logger';
import { createFieldCipherFromConfig } from '../../src/security/field-cipher-from-config';
import { createOperationGuard } from '../../src/api/rest/request-authorization';
import { createBookingDataConverter } from '../../src/security/temporal-payload-codec';
import { createTokenVerifier } from '../../src/security/token-verifier';
import type { TaskQueueNames } from '../../src/domain/task-queues';
import { apiProcessReadyLine, apiProcessVariables } from './api-process-launcher';
import { fastSagaTimings, sagaConfig } from './saga-environment';

function requiredVariable(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

async function main(): Promise<void> {
  const config = sagaConfig(
    JSON.parse(requiredVariable(apiProcessVariables.configuration)) as Record<string, string>,
  );
  const taskQueueNames = JSON.parse(requiredVariable(apiProcessVariables.taskQueues)) as TaskQueueNames;
  const signingKey = JSON.parse(requiredVariable(apiProcessVariables.signingKey)) as JWK;
  const logger = createLogger({ level: config.logLevel, name: 'api-process' });
  const database = createDatabase(config.database.url, {
    poolSize: config.database.poolSize,
    applicationName: 'api-process',
  });
  const cipher = createFieldCipherFromConfig(config);
  const connection = await Connection.connect({ address: config.temporal.address });
  const dataConverter = createBookingDataConverter(config);
  const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter });
  const verifier = createTokenVerifier({
    issuer: requiredVariable(apiProcessVariables.issuer),
    audience: config.auth.audience,
    algorithms: ['RS256'],
    clockToleranceSeconds: 5,
    keySetSource: async () => ({ keys: [signingKey] }),
  });
  const bookings = createBookingApplication({
    config,
    database,
    temporal,
    cipher,
    timings: fastSagaTimings,
    taskQueues: taskQueueNames,
  });
  const checkReadiness = createReadinessCheck({ database, temporal: connection });

  const app = createRestApp({
    logger,
    checkReadiness,
    settings: restSettingsFromConfig(config),
    applications: {
      bookings,
      catalog: createCatalogApplication({ database }),
      users: createUserApplication({ database, cipher }),
    },
    idempotency: createIdempotencyStore({ database, cipher, settings: config.idempotency }),
    operationGuard: createOperationGuard(verifier),
    dataConverter,
  });
  const restServer = createRestServer(app, { requestTimeoutMs: config.http.requestTimeoutMs });
  await new Promise<void>((resolve) => restServer.listen(0, '127.0.0.1', resolve));
  const grpcServer = await startGrpcServer(
    {
      host: '127.0.0.1',
      port: 0,
      transport: { kind: 'insecure' },
      maxReceiveMessageBytes: config.grpc.maxReceiveMessageBytes,
      maxSendMessageBytes: config.grpc.maxSendMessageBytes,
      keepaliveTimeMs: config.grpc.keepaliveTimeMs,
      keepaliveTimeoutMs: config.grpc.keepaliveTimeoutMs,
      shutdownGraceMs: 1000,
      healthCheckIntervalMs: config.grpc.healthCheckIntervalMs,
    },
    {
      application: bookings,
      verifyAccessToken: (token) => verifier.verifyAccessToken(token),
      checkReadiness,
      logger,
    },
  );

  process.once('SIGTERM', () => {
    void (async () => {
      if ('closeAllConnections' in restServer) restServer.closeAllConnections();
      await Promise.allSettled([
        new Promise<void>((resolve) => restServer.close(() => resolve())),
        grpcServer.stop(),
      ]);
      await Promise.allSettled([database.destroy(), connection.close()]);
      process.exit(0);
    })();
  });
  const { port: httpPort } = restServer.address() as AddressInfo;
  process.stdout.write(`${apiProcessReadyLine} ${httpPort} ${grpcServer.port}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `api process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
