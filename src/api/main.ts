// Entry point of the API process: REST (and gRPC) fronts over the application layer, against external services.
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { createDatabase } from '../db/connection';
import { createBookingApplication } from '../application/bookings';
import { createCatalogApplication } from '../application/catalog';
import { createReadinessCheck } from '../application/readiness';
import { createUserApplication } from '../application/users';
import { createIdentityProvider, identityProviderOptionsFromConfig } from '../identity/identity-provider';
import { createFieldCipherFromConfig } from '../security/field-cipher-from-config';
import { createOperationGuard } from '../security/rest-authorization';
import { createBookingDataConverter } from '../security/temporal-payload-codec';
import { createTokenVerifierFromConfig } from '../security/token-verifier-from-config';
import { createRestApp, restSettingsFromConfig } from './rest/app';
import { identityProviderRouter } from './rest/auth-routes';
import { createIdempotencyStore, schedulePurge } from './rest/idempotency';
import { createRestServer } from './rest/server';
import { grpcServerSettingsFromConfig, startGrpcServer } from './grpc/server';
import { exitOnStartupFailure, listen, onShutdownSignal } from '../runtime/process';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  // Read first: a gRPC TLS misconfiguration stops the process before anything listens.
  const grpcSettings = grpcServerSettingsFromConfig(config);
  const database = createDatabase(config.database.url, {
    poolSize: config.database.poolSize,
    applicationName: 'bookings-api',
  });
  const cipher = createFieldCipherFromConfig(config);
  // Lazy, so the API starts (and /readyz reports why it is not ready) while Temporal is still coming up.
  const connection = Connection.lazy({ address: config.temporal.address });
  const dataConverter = createBookingDataConverter(config);
  const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter });

  const identityProviderOptions = identityProviderOptionsFromConfig(config, { database, cipher, logger });
  const identityProvider =
    identityProviderOptions === undefined ? undefined : await createIdentityProvider(identityProviderOptions);
  const verifier = createTokenVerifierFromConfig(config, {
    database,
    cipher,
    ...(identityProvider === undefined ? {} : { keySetSource: () => identityProvider.jsonWebKeySet() }),
  });

  const bookings = createBookingApplication({ config, database, temporal, cipher });
  const checkReadiness = createReadinessCheck({ database, temporal: connection });
  const idempotency = createIdempotencyStore({ database, cipher, settings: config.idempotency });
  const app = createRestApp({
    logger,
    checkReadiness,
    settings: restSettingsFromConfig(config),
    applications: {
      bookings,
      catalog: createCatalogApplication({ database }),
      users: createUserApplication({ database, cipher }),
    },
    idempotency,
    operationGuard: createOperationGuard(verifier),
    dataConverter,
    additionalRouters: identityProvider === undefined ? [] : [identityProviderRouter(identityProvider)],
  });
  const stopPurge = schedulePurge(idempotency, config.idempotency.purgeIntervalSeconds * 1000, (error) =>
    logger.warn({ err: error }, 'purging expired idempotency keys failed'),
  );

  const server = createRestServer(app, {
    tls: config.http.tls,
    requestTimeoutMs: config.http.requestTimeoutMs,
  });
  await listen(server, { host: config.http.host, port: config.http.port, variable: 'HTTP_PORT' });
  logger.info(
    { port: config.http.port, protocols: config.http.tls ? 'HTTP/2 and HTTP/1.1 over TLS' : 'HTTP/1.1' },
    'REST API listening',
  );

  const grpcServer = await startGrpcServer(grpcSettings, {
    application: bookings,
    verifyAccessToken: (token) => verifier.verifyAccessToken(token),
    checkReadiness,
    logger,
  });
  logger.info({ port: grpcServer.port, transport: grpcSettings.transport.kind }, 'gRPC API listening');

  onShutdownSignal(logger, async () => {
    stopPurge();
    await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), grpcServer.stop()]);
    await Promise.allSettled([database.destroy(), connection.close()]);
  });
}

main().catch(exitOnStartupFailure(createLogger({ level: 'info', name: 'api' })));
