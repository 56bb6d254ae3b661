// Wires the API process from its configuration: stores, application layer, identity, the REST app and the gRPC front.
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type Koa from 'koa';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { createDatabase } from '../db/connection';
import { purgeRefundQuotes } from '../db/refund-quotes';
import {
  listenForRouteAvailabilityChanges,
  type RouteAvailabilityChanges,
} from '../db/route-availability-changes';
import { createBookingApplication, type BookingApplicationDependencies } from '../application/bookings';
import { createCatalogApplication } from '../application/catalog';
import { createFareApplication, type FareApplication } from '../application/fares';
import type { BookingApplication } from '../application/interface';
import { createPaymentWebhookApplication } from '../application/payment-webhooks';
import { createReadinessCheck, type ReadinessCheck } from '../application/readiness';
import { createStartReconciler, scheduleStartReconciliation } from '../application/start-reconciler';
import { createTicketApplication, type TicketApplication } from '../application/tickets';
import { createRefundQuoteApplication, type RefundQuoteApplication } from '../application/refund-quotes';
import { createBoardingApplication, type BoardingApplication } from '../application/boarding';
import { createUserApplication } from '../application/users';
import {
  createPartnerWebhookApplication,
  type PartnerWebhookApplication,
  type WebhookDeliveryStarter,
  type WebhookSender,
} from '../application/partner-webhooks';
import { createWebhookDeliveryStarter } from '../application/webhook-delivery-starter';
import { createPartnerEventSweep } from '../application/partner-event-sweep';
import { createWebhookSender } from '../adapters/webhook-sender';
import { createPartnerEventSweepCounter } from '../observability/partner-webhook-metrics';
import { createTicketKeyStore } from '../db/ticket-keys';
import {
  createIdentityProvider,
  identityProviderOptionsFromConfig,
  type IdentityProvider,
} from '../identity/identity-provider';
import {
  authorizationServerOptionsFromConfig,
  createAuthorizationServer,
} from '../identity/authorization-server';
import { createTokenVerifierFromConfig } from '../identity/token-verifier-from-config';
import { createFieldCipherFromConfig } from '../security/field-cipher-from-config';
import type { FieldCipher } from '../security/field-encryption';
import { createBookingDataConverter } from '../security/temporal-payload-codec';
import type { TokenVerifier } from '../security/token-verifier';
import { createRestApp, restSettingsFromConfig } from './rest/app';
import { identityProviderRouter } from './rest/auth-routes';
import { schedulePurge } from '../application/idempotency-key-store';
import { createIdempotencyStore, type IdempotencyStore } from './rest/idempotency';
import { createOperationGuard } from './rest/request-authorization';
import { createRestServer } from './rest/server';
import { grpcServerSettingsFromConfig, startGrpcServer } from './grpc/server';
import { countingLoginThrottle, countingOpenHoldRefusals } from './rest/request-metrics';
import {
  createApiMetrics,
  createProcessMetricsRegistry,
  registerAvailabilityChangesHeard,
  type ApiMetrics,
} from '../observability/metrics';
import { backgroundFailureReporter } from '../observability/background-failures';
import { createWebhookMetrics } from '../observability/payment-metrics';
import { createPlainHttpServer, registryMetrics } from '../observability/metrics-http';
import { listen } from '../runtime/process';
import { temporalClientInterceptors } from '../observability/tracing-temporal';
import { describeTemporalConnection, temporalConnectionOptions } from '../security/temporal-connection';

/** The outside services the API talks to; `startApi` opens them, tests may hand in their own. */
export interface ApiConnections {
  database: Knex;
  cipher: FieldCipher;
  /** The Temporal connection readiness checks; the client below runs over it. */
  connection: Connection;
  temporal: Client;
  /** PostgreSQL's notices of availability changes; without them, availability is never kept. */
  availabilityChanges?: RouteAvailabilityChanges;
}

/** What a deployment leaves at its defaults; tests set them to keep their workflows on queues of their own. */
export type ApiOptions = Pick<BookingApplicationDependencies, 'taskQueues' | 'timings'> & {
  /** Keys of an external issuer, read without discovery (the embedded provider's are always read in-process). */
  keySetSource?: () => Promise<{ keys: unknown[] }>;
  /** Where both fronts report (startApi's process registry); an unexported registry of its own when absent. */
  metrics?: ApiMetrics;
  /** What pings partners' endpoints; the outbound-guarded sender of WEBHOOK_ALLOW_LIST unless given. */
  webhookSender?: WebhookSender;
  /** What wakes delivery workflows; the Temporal one on the bookings task queue unless given. */
  webhookDeliveries?: WebhookDeliveryStarter;
};

/** The API before anything listens: the REST app and what the gRPC front is built from. */
export interface ApiComposition {
  app: Koa;
  bookings: BookingApplication;
  tickets: TicketApplication;
  boarding: BoardingApplication;
  webhooks: PartnerWebhookApplication;
  refundQuotes: RefundQuoteApplication;
  fares: FareApplication;
  /** Wakes partner webhook delivery workflows; the sweep uses it for events their writer left. */
  webhookDeliveries: WebhookDeliveryStarter;
  checkReadiness: ReadinessCheck;
  verifier: TokenVerifier;
  /** Undefined when tokens come from an external issuer (`OIDC_ISSUER`). */
  identityProvider: IdentityProvider | undefined;
  idempotency: IdempotencyStore;
  metrics: ApiMetrics;
}

export async function composeApi(
  config: Config,
  logger: Logger,
  connections: ApiConnections,
  options: ApiOptions = {},
): Promise<ApiComposition> {
  const { database, cipher, connection, temporal, availabilityChanges } = connections;
  const identityProviderOptions = identityProviderOptionsFromConfig(config, { database, cipher, logger });
  const identityProvider =
    identityProviderOptions === undefined ? undefined : await createIdentityProvider(identityProviderOptions);
  const keySetSource =
    identityProvider === undefined ? options.keySetSource : () => identityProvider.jsonWebKeySet();
  const verifier = createTokenVerifierFromConfig(config, {
    database,
    cipher,
    ...(keySetSource === undefined ? {} : { keySetSource }),
  });

  const metrics = options.metrics ?? createApiMetrics();
  // Delivery workflows run on the bookings task queue, beside the booking workflows.
  const webhookDeliveries =
    options.webhookDeliveries ??
    createWebhookDeliveryStarter(temporal, {
      ...(options.taskQueues === undefined ? {} : { taskQueues: options.taskQueues }),
      retryScheduleSeconds: config.webhooks.retryScheduleSeconds,
    });
  const bookings = createBookingApplication({
    webhookDeliveries,
    config,
    database,
    temporal,
    cipher,
    logger,
    reportFailure: backgroundFailureReporter(metrics.backgroundFailures, logger),
    ...(options.taskQueues === undefined ? {} : { taskQueues: options.taskQueues }),
    ...(options.timings === undefined ? {} : { timings: options.timings }),
  });
  const ticketKeys = createTicketKeyStore({ database, cipher });
  const tickets = createTicketApplication({ database, cipher, bookings, ticketKeys });
  const refundQuotes = createRefundQuoteApplication({ database, bookings });
  // Scans verify against the key set this service publishes for its own tickets, and no other.
  const boarding = createBoardingApplication({
    database,
    temporal,
    cipher,
    ticketKeys: () => ticketKeys.publicKeySet(),
  });
  const webhooks = createPartnerWebhookApplication({
    database,
    cipher,
    sender: options.webhookSender ?? createWebhookSender({ allowList: config.webhooks.allowList }),
    deliveries: webhookDeliveries,
    allowHttp: config.webhooks.allowHttp,
  });
  const checkReadiness = createReadinessCheck({ database, temporal: connection });
  const idempotency = createIdempotencyStore({ database, cipher, settings: config.idempotency });
  const countedIdentityProvider =
    identityProvider === undefined ? undefined : countingLoginThrottle(metrics, identityProvider);
  const authorizationServerOptions =
    countedIdentityProvider === undefined
      ? undefined
      : authorizationServerOptionsFromConfig(config, {
          database,
          cipher,
          identityProvider: countedIdentityProvider,
          logger,
        });
  const webhookMetrics = createWebhookMetrics(metrics.registry);
  const paymentWebhooks = createPaymentWebhookApplication({
    database,
    temporal,
    webhookSecret:
      config.payments.gateway === 'stripe'
        ? config.payments.stripe.webhookSecret
        : config.payments.webhookSecret,
    metrics: webhookMetrics,
    logger,
  });
  if (availabilityChanges !== undefined) {
    registerAvailabilityChangesHeard(metrics.registry, () => availabilityChanges.hearing);
  }
  // One catalogue for both fronts: its availability and passenger type caches serve REST and gRPC alike.
  const catalog = createCatalogApplication({
    database,
    routeCacheSeconds: config.catalog.routeCacheSeconds,
    ...(availabilityChanges === undefined
      ? {}
      : {
          availabilityCache: {
            changes: availabilityChanges,
            timeToLiveSeconds: config.catalog.availabilityCacheSeconds,
            maximumEntries: config.catalog.availabilityCacheEntries,
          },
        }),
  });
  const fares = createFareApplication({ database, catalog });
  const app = createRestApp({
    metrics,
    logger,
    checkReadiness,
    settings: restSettingsFromConfig(config),
    applications: {
      bookings: countingOpenHoldRefusals(metrics, bookings),
      catalog,
      users: createUserApplication({ database, cipher }),
      tickets,
      boarding,
      webhooks,
      refundQuotes,
      fares,
    },
    idempotency,
    operationGuard: createOperationGuard(verifier),
    // The codec endpoint decodes what the client encodes: the same keyring, from the same configuration.
    dataConverter: createBookingDataConverter(config),
    paymentWebhooks: {
      application: paymentWebhooks,
      onRefused: (reason) => webhookMetrics.webhookRefusals.inc({ reason }),
    },
    additionalRouters:
      countedIdentityProvider === undefined || authorizationServerOptions === undefined
        ? []
        : [
            identityProviderRouter(
              countedIdentityProvider,
              createAuthorizationServer(authorizationServerOptions),
            ),
          ],
  });
  return {
    app,
    bookings,
    tickets,
    boarding,
    webhooks,
    refundQuotes,
    fares,
    webhookDeliveries,
    checkReadiness,
    verifier,
    identityProvider,
    idempotency,
    metrics,
  };
}

/** The running API process: the ports it listens on (useful when configured as 0) and its orderly stop. */
export interface RunningApi {
  readonly httpPort: number;
  readonly grpcPort: number;
  /** The port of the Prometheus /metrics listener (METRICS_PORT). */
  readonly metricsPort: number;
  /** Stops listening on both fronts, lets calls in flight finish, then closes PostgreSQL and Temporal. */
  stop(): Promise<void>;
}

/** Opens the connections, composes the API and listens: REST first, then gRPC. */
export async function startApi(
  config: Config,
  logger: Logger,
  options: ApiOptions = {},
): Promise<RunningApi> {
  // Read first: a gRPC TLS misconfiguration stops the process before anything listens.
  const grpcSettings = grpcServerSettingsFromConfig(config);
  const database = createDatabase(config.database.url, {
    poolSize: config.database.poolSize,
    applicationName: 'bookings-api',
  });
  const cipher = createFieldCipherFromConfig(config);
  // Lazy, so the API starts (and /readyz reports why it is not ready) while Temporal is still coming up.
  const connection = Connection.lazy(temporalConnectionOptions(config.temporal));
  logger.info(describeTemporalConnection(config.temporal), 'Temporal frontend');
  const temporal = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: createBookingDataConverter(config),
    interceptors: { workflow: temporalClientInterceptors() },
  });
  const apiMetrics = options.metrics ?? createApiMetrics(createProcessMetricsRegistry());
  const availabilityChanges =
    config.catalog.availabilityCacheSeconds > 0
      ? await listenForRouteAvailabilityChanges({
          databaseUrl: config.database.url,
          logger,
          reportFailure: backgroundFailureReporter(apiMetrics.backgroundFailures, logger),
        })
      : undefined;

  const {
    app,
    bookings,
    tickets,
    boarding,
    webhooks,
    refundQuotes,
    fares,
    webhookDeliveries,
    checkReadiness,
    verifier,
    idempotency,
    metrics,
  } = await composeApi(
    config,
    logger,
    {
      database,
      cipher,
      connection,
      temporal,
      ...(availabilityChanges === undefined ? {} : { availabilityChanges }),
    },
    { ...options, metrics: apiMetrics },
  );
  const stopPurge = schedulePurge(idempotency, config.idempotency.purgeIntervalSeconds * 1000, (error) =>
    logger.warn({ err: error }, 'purging expired idempotency keys failed'),
  );
  // Quotes are kept a day for support to read what was promised; they go on the same beat as idempotency keys.
  const stopQuotePurge = schedulePurge(
    { purgeExpired: () => purgeRefundQuotes(database) },
    config.idempotency.purgeIntervalSeconds * 1000,
    (error) => logger.warn({ err: error }, 'purging old refund quotes failed'),
  );
  // Every API process sweeps: starts are idempotent, so two processes finding the same lost start is harmless.
  const reportFailure = backgroundFailureReporter(apiMetrics.backgroundFailures, logger);
  const stopStartReconciliation = scheduleStartReconciliation(
    createStartReconciler({
      config,
      database,
      temporal,
      cipher,
      onUnreadable: (bookingId, error) => reportFailure('unreadable_lost_start', error, { bookingId }),
    }),
    config.booking.startReconcileIntervalSeconds * 1000,
    (error) =>
      logger.warn({ err: error }, 'starting bookings whose start was lost failed; retrying next pass'),
  );
  // Likewise for partner events whose writer committed them and stopped before waking their deliveries.
  const sweptEvents = createPartnerEventSweepCounter(metrics.registry);
  const stopPartnerEventSweep = scheduleStartReconciliation(
    createPartnerEventSweep({ database, webhookDeliveries, onSwept: (events) => sweptEvents.inc(events) }),
    config.booking.startReconcileIntervalSeconds * 1000,
    (error) =>
      logger.warn({ err: error }, 'waking deliveries of left partner events failed; retrying next pass'),
  );

  const server = createRestServer(app, {
    tls: config.http.tls,
    requestTimeoutMs: config.http.requestTimeoutMs,
  });
  await listen(server, { host: config.http.host, port: config.http.port, variable: 'HTTP_PORT' });
  const httpPort = (server.address() as AddressInfo).port;
  logger.info(
    { port: httpPort, protocols: config.http.tls ? 'HTTP/2 and HTTP/1.1 over TLS' : 'HTTP/1.1' },
    'REST API listening',
  );

  const grpcServer = await startGrpcServer(grpcSettings, {
    application: bookings,
    tickets,
    boarding,
    refundQuotes,
    webhooks,
    fares,
    verifyAccessToken: (token) => verifier.verifyAccessToken(token),
    checkReadiness,
    logger,
    metrics,
  });
  logger.info({ port: grpcServer.port, transport: grpcSettings.transport.kind }, 'gRPC API listening');

  // Its own listener, so the public ports never serve it; loopback unless the deployment opens it.
  const metricsServer = createPlainHttpServer({ '/metrics': registryMetrics(metrics.registry) }, (error) =>
    logger.warn({ err: error }, 'collecting the metrics failed'),
  );
  await listen(metricsServer, { ...config.metrics.api, variable: 'METRICS_PORT' });
  const metricsPort = (metricsServer.address() as AddressInfo).port;
  logger.info({ host: config.metrics.api.host, port: metricsPort }, 'metrics listening on /metrics');

  return {
    httpPort,
    grpcPort: grpcServer.port,
    metricsPort,
    async stop() {
      stopPurge();
      stopQuotePurge();
      stopStartReconciliation();
      stopPartnerEventSweep();
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        grpcServer.stop(),
        new Promise<void>((resolve) => metricsServer.close(() => resolve())),
      ]);
      await Promise.allSettled([database.destroy(), connection.close(), availabilityChanges?.close()]);
    },
  };
}
