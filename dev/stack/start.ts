// `npm start`: the whole service on embedded parts — PostgreSQL, Temporal dev server, worker, REST and gRPC.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, plaintextTemporalEnvironment, type Config } from '../../src/config';
import { projectRoot } from '../../src/project-root';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres';
import { startTemporalDevServer, type RunningTemporal } from './temporal-dev-server';
import type { ServiceSupervisor } from './supervisor';
import { loadOrCreateDevelopmentSecrets } from './development-secrets';
import { loadStackConfig, stackOutboxDirectory, type StackConfig } from './settings';
import type { DevelopmentCertificates } from './development-certificates';
import { makeDemoBookings } from './demo-bookings';
import {
  localstripeBinary,
  localstripeKey,
  registerLocalstripeWebhook,
  startLocalstripe,
  type RunningLocalstripe,
} from './localstripe';
import { developmentOAuthClients } from './example-client';
import {
  assertPortsFree,
  bannerFooterLines,
  grpcBannerLines,
  grpcTlsEnvironment,
  listenerUrl,
  migrateAndSeed,
  runStack,
  stackLogFormat,
  stackLogger as logger,
  superviseBookingProcess,
  temporalCliPath,
  waitForReady,
} from './stack-parts';

/**
 * `PAYMENT_GATEWAY=stripe` without a Stripe account of the developer's own (no STRIPE_SECRET_KEY): the stack runs
 * localstripe and points the service at it, so a 3-D Secure payment can be walked on this machine.
 */
const runsLocalstripe =
  process.env.PAYMENT_GATEWAY?.trim() === 'stripe' && (process.env.STRIPE_SECRET_KEY ?? '') === '';

/** Where localstripe posts its events: the API's webhook endpoint, on loopback. */
function webhookEndpointUrl(stack: StackConfig): string {
  return `http://127.0.0.1:${stack.httpPort}/v1/payments/stripe/events`;
}

async function assertStackPortsFree(stack: StackConfig): Promise<void> {
  // A metrics listener on a port picked at random could not be printed, nor scraped by a configured Prometheus.
  for (const [port, variable] of [
    [stack.metricsPort, 'METRICS_PORT'],
    [stack.workerMetricsPort, 'WORKER_METRICS_PORT'],
  ] as const) {
    if (port === 0) {
      throw new Error(`${variable}=0 would pick a port at random; set ${variable} to a free port`);
    }
  }
  await assertPortsFree([
    [stack.httpPort, 'HTTP_PORT'],
    [stack.grpcPort, 'GRPC_PORT'],
    [stack.metricsPort, 'METRICS_PORT'],
    [stack.workerMetricsPort, 'WORKER_METRICS_PORT'],
    [stack.temporalPort, 'TEMPORAL_PORT'],
    [stack.temporalUiPort, 'TEMPORAL_UI_PORT'],
    [stack.postgresPort, 'EMBEDDED_POSTGRES_PORT'],
    ...(runsLocalstripe ? ([[stack.localstripePort, 'LOCALSTRIPE_PORT']] as const) : []),
  ]);
}

function banner(
  stack: StackConfig,
  config: Config,
  temporal: RunningTemporal,
  postgres: RunningPostgres,
  certificates: DevelopmentCertificates | undefined,
  localstripe: RunningLocalstripe | undefined,
): string {
  const api = `http://localhost:${stack.httpPort}`;
  return [
    '',
    'Bus booking service is running.',
    `  REST API        ${api}/v1   (also under ${api}/api)`,
    `  API docs        ${api}/docs   (OpenAPI: ${api}/openapi.yaml)`,
    `  Health          ${api}/healthz   ${api}/readyz`,
    `  Metrics         ${listenerUrl(config.metrics.api)}/metrics   (API: REST and gRPC requests)`,
    `  Worker metrics  ${listenerUrl(config.metrics.worker)}/metrics   (Temporal SDK and bookings; /healthz, /readyz)`,
    ...grpcBannerLines([stack.grpcPort], certificates),
    `  Temporal UI     ${temporal.uiUrl}   (frontend ${temporal.address}; payloads decoded by ${api}/codec)`,
    ...paymentBannerLines(stack, config, localstripe),
    ...bannerFooterLines({
      config,
      postgresUrl: postgres.url,
      postgresDataDirectory: postgres.dataDirectory,
      dataDirectory: stack.dataDirectory,
    }),
  ].join('\n');
}

function paymentBannerLines(
  stack: StackConfig,
  config: Config,
  localstripe: RunningLocalstripe | undefined,
): string[] {
  if (config.payments.gateway === 'simulator') {
    return [
      '  Payments        the simulator (payment_token tok_visa; PAYMENT_GATEWAY=stripe npm start for 3-D Secure)',
    ];
  }
  if (localstripe === undefined) {
    return [
      `  Payments        Stripe at ${config.payments.stripe.apiUrl ?? 'api.stripe.com'} (payment_method pm_…)`,
    ];
  }
  return [
    `  Payments        Stripe's API faked by localstripe at ${localstripe.url}   (every interface; key ${localstripeKey})`,
    `  Stripe webhook  ${webhookEndpointUrl(stack)}   (registered with localstripe; walk: docs/payments.md)`,
  ];
}

/** The seed's partial-trip bookings, through the running API; without them the stack still serves, so it says so. */
async function bookDemoSegments(stack: StackConfig, config: Config): Promise<void> {
  try {
    const summary = await makeDemoBookings({
      baseUrl: `http://127.0.0.1:${stack.httpPort}`,
      today: new Date(),
      payment:
        config.payments.gateway === 'stripe'
          ? { payment_method: 'pm_card_visa' }
          : { payment_token: 'tok_visa' },
    });
    logger.info(
      `demo bookings: ${summary.segments.length} on segments ${summary.segments.join(', ')} ` +
        `(${summary.made} made now, ${summary.alreadyThere} already there)`,
    );
  } catch (error) {
    logger.error({ err: error }, 'demo bookings not made; the stack runs without them');
  }
}

const running: { stop(): Promise<void> }[] = [];
const services: ServiceSupervisor[] = [];
let stopping = false;

async function start(stopEverything: (exitCode: number) => Promise<void>): Promise<void> {
  const stack = loadStackConfig(process.env, projectRoot);
  await assertStackPortsFree(stack);
  fs.mkdirSync(path.join(stack.dataDirectory, 'logs'), { recursive: true });
  const secrets = loadOrCreateDevelopmentSecrets(stack.dataDirectory);
  const grpcTls = grpcTlsEnvironment(stack.dataDirectory);
  const executable = temporalCliPath();

  const localstripeAt = runsLocalstripe ? localstripeBinary() : undefined;

  logger.info(`starting PostgreSQL and the Temporal dev server${runsLocalstripe ? ' and localstripe' : ''}`);
  const [postgres, temporal, localstripe] = await Promise.all([
    startEmbeddedPostgres({
      dataDirectory: path.join(stack.dataDirectory, 'postgres'),
      port: stack.postgresPort,
      databaseName: 'bookings',
      persistent: true,
      logFile: path.join(stack.dataDirectory, 'logs', 'postgres.log'),
      // Ctrl-C reaches PostgreSQL too (same process group): its exit while the stack stops is no news.
      log: (message) => {
        if (!stopping) logger.info(message);
      },
    }).then((started) => (running.push(started), started)),
    startTemporalDevServer({
      executable,
      databaseFile: path.join(stack.dataDirectory, 'temporal.sqlite'),
      logFile: path.join(stack.dataDirectory, 'logs', 'temporal.log'),
      port: stack.temporalPort,
      uiPort: stack.temporalUiPort,
      namespace: stack.namespace,
      // The browser calls it, from the UI's origin (allowed by CODEC_CORS_ORIGINS below).
      uiCodecEndpoint: `http://localhost:${stack.httpPort}/codec`,
    }).then((started) => (running.push(started), started)),
    localstripeAt === undefined
      ? undefined
      : startLocalstripe({
          binary: localstripeAt,
          port: stack.localstripePort,
          logFile: fs.openSync(path.join(stack.dataDirectory, 'logs', 'localstripe.log'), 'a'),
        }).then((started) => (running.push(started), started)),
  ]);
  // localstripe starts empty every time: the secret only has to last as long as its registration.
  const webhookSecret =
    process.env.STRIPE_WEBHOOK_SECRET ?? `whsec_${randomBytes(24).toString('base64').replace(/[+/=]/g, 'x')}`;

  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    ...secrets,
    ...grpcTls.environment,
    ...plaintextTemporalEnvironment,
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: stack.namespace,
    HTTP_PORT: String(stack.httpPort),
    GRPC_PORT: String(stack.grpcPort),
    LOG_FORMAT: stackLogFormat,
    NOTIFICATIONS_OUTBOX_DIR: stackOutboxDirectory(process.env, stack.dataDirectory),
    // The REST example signs in through this client (npm run rest:example); a set IDP_CLIENTS replaces it.
    IDP_CLIENTS: process.env.IDP_CLIENTS ?? developmentOAuthClients,
    CODEC_CORS_ORIGINS:
      process.env.CODEC_CORS_ORIGINS ??
      `http://localhost:${stack.temporalUiPort},http://127.0.0.1:${stack.temporalUiPort}`,
    ...(localstripe === undefined
      ? {}
      : {
          STRIPE_API_URL: localstripe.url,
          STRIPE_SECRET_KEY: localstripeKey,
          STRIPE_WEBHOOK_SECRET: webhookSecret,
        }),
  };
  const config = loadConfig(environment);

  logger.info('applying migrations and demo data');
  await migrateAndSeed(postgres.url, config);

  for (const [name, entryPoint] of [
    ['worker', 'worker/main.js'],
    ['api', 'api/main.js'],
  ] as const) {
    const service = superviseBookingProcess({
      name,
      entryPoint,
      environment,
      onGiveUp: () => {
        logger.error(`${name} cannot be kept running; stopping the stack`);
        void stopEverything(1);
      },
    });
    services.push(service);
    service.start();
  }
  await waitForReady(`http://127.0.0.1:${stack.httpPort}/readyz`, 120_000, services);
  if (localstripe !== undefined) {
    await registerLocalstripeWebhook(localstripe.url, {
      id: 'bookings-stack',
      url: webhookEndpointUrl(stack),
      secret: webhookSecret,
    });
  }
  await bookDemoSegments(stack, config);
  process.stdout.write(banner(stack, config, temporal, postgres, grpcTls.certificates, localstripe));
}

runStack('npm start', start, async () => {
  stopping = true;
  // The services first, so none is restarted while PostgreSQL and Temporal go away under it.
  await Promise.allSettled(services.map((service) => service.stop(10_000)));
  for (const part of running.reverse()) await part.stop().catch(() => undefined);
});
