// `npm run stack:cluster`: the service on a real Temporal cluster — embedded PostgreSQL, the Temporal services as
// separate processes, two API processes and workers split by task queue, all supervised. Also a library for tests.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, plaintextTemporalEnvironment, type Config } from '../../src/config';
import { projectRoot } from '../../src/project-root';
import { taskQueues } from '../../src/domain/task-queues';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres';
import type { ServiceSupervisor } from './supervisor';
import { loadOrCreateDevelopmentSecrets } from './development-secrets';
import { loadClusterStackConfig, stackOutboxDirectory, type ClusterStackConfig } from './settings';
import type { DevelopmentCertificates } from './development-certificates';
import {
  assertPortsFree,
  bannerFooterLines,
  grpcBannerLines,
  grpcTlsEnvironment,
  listenerUrl,
  migrateAndSeed,
  runStack,
  stackLogger as logger,
  superviseBookingProcess,
  temporalCliPath,
  waitForReady,
} from './stack-parts';
import {
  installTemporalServer,
  loadOrCreateDatabasePasswords,
  loadOrCreateTemporalCertificates,
  prepareTemporalDatabases,
  setUpNamespace,
  startTemporalCluster,
  temporalClusterPortList,
  temporalServiceNames,
  writeTemporalServerConfig,
  type RunningTemporalCluster,
  type TemporalClusterPorts,
  type TemporalClusterTls,
  type TemporalServiceName,
} from './temporal-cluster';

/** One booking process of the cluster stack and what sets it apart from the others. */
interface BookingProcess {
  name: string;
  entryPoint: 'api/main.js' | 'worker/main.js';
  environment: NodeJS.ProcessEnv;
}

function bookingProcesses(settings: ClusterStackConfig, bookingsWorkers = 2): BookingProcess[] {
  const api = (index: number): BookingProcess => ({
    name: `api-${index + 1}`,
    entryPoint: 'api/main.js',
    environment: {
      HTTP_PORT: String(settings.httpPort + index),
      GRPC_PORT: String(settings.grpcPort + index),
      METRICS_PORT: String(settings.metricsPort + index),
    },
  });
  const worker = (name: string, queue: string, metricsOffset: number): BookingProcess => ({
    name,
    entryPoint: 'worker/main.js',
    environment: {
      WORKER_TASK_QUEUES: queue,
      WORKER_METRICS_PORT: String(settings.metricsPort + metricsOffset),
    },
  });
  return [
    api(0),
    api(1),
    ...Array.from({ length: bookingsWorkers }, (_, index) =>
      worker(`worker-bookings-${index + 1}`, taskQueues.bookings, 2 + index),
    ),
    worker('worker-booking-seats', taskQueues.seats, 2 + bookingsWorkers),
    worker('worker-booking-payments', taskQueues.payments, 3 + bookingsWorkers),
    worker('worker-booking-notifications', taskQueues.notifications, 4 + bookingsWorkers),
  ];
}

function temporalPortsOf(settings: ClusterStackConfig): TemporalClusterPorts {
  return {
    frontend: settings.temporalPort,
    membership: settings.temporalMembershipPort,
    metrics: settings.temporalMetricsPort,
  };
}

/** Every port the stack binds, with the variable that moves it. */
function clusterPorts(settings: ClusterStackConfig, bookingsWorkers?: number): [number, string][] {
  const processes = bookingProcesses(settings, bookingsWorkers);
  const fromBase = (base: number, variable: string, count: number): [number, string][] =>
    Array.from({ length: count }, (_, offset) => [
      base + offset,
      offset === 0 ? variable : `${variable} + ${offset}`,
    ]);
  return [
    [settings.postgresPort, 'CLUSTER_POSTGRES_PORT'],
    ...temporalClusterPortList(temporalPortsOf(settings), {
      frontend: 'CLUSTER_TEMPORAL_PORT',
      membership: 'CLUSTER_TEMPORAL_MEMBERSHIP_PORT',
      metrics: 'CLUSTER_TEMPORAL_METRICS_PORT',
    }),
    ...fromBase(settings.httpPort, 'CLUSTER_HTTP_PORT', 2),
    ...fromBase(settings.grpcPort, 'CLUSTER_GRPC_PORT', 2),
    ...fromBase(settings.metricsPort, 'CLUSTER_METRICS_PORT', processes.length),
  ];
}

function temporalTlsEnvironment(tls: TemporalClusterTls | undefined): NodeJS.ProcessEnv {
  if (!tls) return {};
  return {
    TEMPORAL_TLS: 'true',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.certificates.certificateAuthority,
    TEMPORAL_TLS_CLIENT_CERT_PATH: tls.certificates.client.certificate,
    TEMPORAL_TLS_CLIENT_KEY_PATH: tls.certificates.client.privateKey,
    TEMPORAL_TLS_SERVER_NAME: tls.serverName,
  };
}

export interface ClusterStackOptions {
  /** Settings in place of those read from the environment (loadClusterStackConfig), e.g. free ports for a test. */
  settings?: Partial<ClusterStackConfig>;
  /** Variables every booking process gets on top of the stack's own (e.g. BOOKING_HOLD_SECONDS). */
  environment?: NodeJS.ProcessEnv;
  /** Worker processes on the `bookings` queue (2 by default), for scaling measurements. */
  bookingsWorkers?: number;
  /** A process crash-looped and its supervisor gave up (the stack keeps the others running). */
  onGiveUp?: (name: string) => void;
}

export interface ClusterStack {
  /** One per API process: `http://127.0.0.1:<port>`. */
  restUrls: string[];
  /** One per API process: `127.0.0.1:<port>`. */
  grpcAddresses: string[];
  /** The booking database, as the booking processes reach it (its own role, as in docker-compose.yml). */
  databaseUrl: string;
  temporalAddress: string;
  namespace: string;
  /** The variables the booking processes got (TEMPORAL_TLS_*, keys, DATABASE_URL...), without per-process ports. */
  environment: NodeJS.ProcessEnv;
  settings: ClusterStackConfig;
  /** The frontend's mutual TLS material, unless CLUSTER_TEMPORAL_TLS is off. */
  temporalTls: TemporalClusterTls | undefined;
  grpcCertificates: DevelopmentCertificates | undefined;
  config: Config;
  postgres: RunningPostgres;
  logDirectory: string;
  processNames(): string[];
  /** The process's id now, or undefined while it waits to be restarted. */
  pid(name: string): number | undefined;
  /** Signals one process as a failure would end it; its supervisor restarts it. */
  kill(name: string, signal?: NodeJS.Signals): void;
  /** Stops every Temporal service, starts them all again and waits until the frontend is healthy. */
  restartTemporalTier(): Promise<void>;
  /** Booking processes first, then Temporal, then PostgreSQL. */
  stop(): Promise<void>;
}

/** Starts everything and resolves once every API and worker answers /readyz. */
export async function startClusterStack(options: ClusterStackOptions = {}): Promise<ClusterStack> {
  const settings = { ...loadClusterStackConfig(process.env, projectRoot), ...options.settings };
  // Each of the dozen children hooks this process's exit (stopWithParent): not a leak.
  process.setMaxListeners(Math.max(process.getMaxListeners(), 64));
  await assertPortsFree(clusterPorts(settings, options.bookingsWorkers));
  const logDirectory = path.join(settings.dataDirectory, 'logs');
  fs.mkdirSync(logDirectory, { recursive: true });
  const setupLog = path.join(logDirectory, 'setup.log');
  const onGiveUp = options.onGiveUp ?? ((name: string) => logger.error(`${name} cannot be kept running`));

  const secrets = loadOrCreateDevelopmentSecrets(settings.dataDirectory);
  const grpcTls = grpcTlsEnvironment(settings.dataDirectory);
  const passwords = loadOrCreateDatabasePasswords(settings.dataDirectory);
  const temporalTls = settings.temporalTls
    ? loadOrCreateTemporalCertificates(path.join(settings.dataDirectory, 'temporal'))
    : undefined;
  const cliExecutable = temporalCliPath();

  const stopped: { stop(): Promise<void> }[] = [];
  const bookingSupervisors = new Map<string, ServiceSupervisor>();
  let temporal: RunningTemporalCluster | undefined;
  let stopping = false;
  const stop = async () => {
    stopping = true;
    for (const service of bookingSupervisors.values()) service.holdRestarts();
    temporal?.holdRestarts();
    await Promise.allSettled([...bookingSupervisors.values()].map((service) => service.stop(10_000)));
    for (const part of stopped.reverse()) await part.stop().catch(() => undefined);
    stopped.length = 0;
  };

  try {
    logger.info('installing the Temporal server (built once with Go, then cached) and starting PostgreSQL');
    const [installation, postgres] = await Promise.all([
      installTemporalServer(),
      startEmbeddedPostgres({
        dataDirectory: path.join(settings.dataDirectory, 'postgres'),
        port: settings.postgresPort,
        databaseName: 'postgres',
        persistent: true,
        // Five Temporal services keep up to 22 connections each and seven booking processes up to 10: more than
        // the default 100 once a burst after a kill opens every pool at once.
        maxConnections: 250,
        logFile: path.join(logDirectory, 'postgres.log'),
        // Ctrl-C reaches PostgreSQL too (same process group): its exit while the stack stops is no news.
        log: (message) => {
          if (!stopping) logger.info(message);
        },
      }).then((started) => (stopped.push(started), started)),
    ]);
    const superuser = new URL(postgres.url);
    const database = {
      host: '127.0.0.1',
      port: settings.postgresPort,
      superuser: decodeURIComponent(superuser.username),
      superuserPassword: decodeURIComponent(superuser.password),
    };
    logger.info('creating the databases and applying the Temporal schema (deploy/ scripts)');
    await prepareTemporalDatabases({ database, passwords, installation, logFile: setupLog });

    const ports = temporalPortsOf(settings);
    const configFile = writeTemporalServerConfig({
      directory: path.join(settings.dataDirectory, 'temporal'),
      installation,
      database: { host: database.host, port: database.port, password: passwords.temporal },
      ports,
      historyShards: settings.temporalHistoryShards,
      tls: temporalTls,
    });
    logger.info(`starting the Temporal services: ${temporalServiceNames.join(', ')}`);
    temporal = await startTemporalCluster({
      installation,
      configFile,
      ports,
      tls: temporalTls,
      logDirectory,
      log: { info: (message) => logger.info(message), error: (message) => logger.error(message) },
      onGiveUp,
    });
    stopped.push(temporal);
    logger.info(`creating namespace ${settings.namespace} and the booking search attributes`);
    await setUpNamespace({
      cliExecutable,
      address: temporal.address,
      namespace: settings.namespace,
      tls: temporalTls,
      logFile: setupLog,
    });

    const databaseUrl = `postgres://booking:${passwords.booking}@${database.host}:${database.port}/booking`;
    const apiUrl = `http://localhost:${settings.httpPort}`;
    const environment: NodeJS.ProcessEnv = {
      ...process.env,
      ...secrets,
      ...grpcTls.environment,
      // The shell's Temporal security settings (for another cluster) are not this cluster's.
      ...plaintextTemporalEnvironment,
      ...temporalTlsEnvironment(temporalTls),
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: settings.namespace,
      // Both APIs issue and accept the same tokens (the signing keys live in the database): one issuer for both.
      IDP_ISSUER: process.env.IDP_ISSUER ?? apiUrl,
      NOTIFICATIONS_OUTBOX_DIR: stackOutboxDirectory(process.env, settings.dataDirectory),
      ...options.environment,
    };
    const config = loadConfig({ ...environment, HTTP_PORT: String(settings.httpPort) });
    logger.info('applying migrations and demo data');
    await migrateAndSeed(databaseUrl, config);

    const processes = bookingProcesses(settings, options.bookingsWorkers);
    for (const bookingProcess of processes) {
      const service = superviseBookingProcess({
        name: bookingProcess.name,
        entryPoint: bookingProcess.entryPoint,
        environment: { ...environment, ...bookingProcess.environment },
        logFile: path.join(logDirectory, `${bookingProcess.name}.log`),
        onGiveUp: () => onGiveUp(bookingProcess.name),
      });
      bookingSupervisors.set(bookingProcess.name, service);
      service.start();
    }
    const services = [...bookingSupervisors.values()];
    await Promise.all(
      processes.map((bookingProcess) => {
        const port =
          bookingProcess.entryPoint === 'api/main.js'
            ? bookingProcess.environment.HTTP_PORT
            : bookingProcess.environment.WORKER_METRICS_PORT;
        return waitForReady(`http://127.0.0.1:${port}/readyz`, 180_000, services);
      }),
    );

    const running = temporal;
    const supervisorOf = (name: string): ServiceSupervisor => {
      const booking = bookingSupervisors.get(name);
      if (booking) return booking;
      if ((temporalServiceNames as readonly string[]).includes(name))
        return running.supervisor(name as TemporalServiceName);
      throw new Error(`no process named ${name}; the cluster stack runs ${processNames().join(', ')}`);
    };
    const processNames = () => [...temporalServiceNames, ...bookingSupervisors.keys()];
    return {
      restUrls: [0, 1].map((index) => `http://127.0.0.1:${settings.httpPort + index}`),
      grpcAddresses: [0, 1].map((index) => `127.0.0.1:${settings.grpcPort + index}`),
      databaseUrl,
      temporalAddress: temporal.address,
      namespace: settings.namespace,
      environment,
      settings,
      temporalTls,
      grpcCertificates: grpcTls.certificates,
      config,
      postgres,
      logDirectory,
      processNames,
      pid: (name) => supervisorOf(name).pid,
      kill: (name, signal = 'SIGKILL') => {
        if (!supervisorOf(name).signal(signal)) throw new Error(`${name} is not running right now`);
      },
      restartTemporalTier: () => running.restart(),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function banner(stack: ClusterStack): string {
  const { settings, config, temporalTls } = stack;
  const apis = stack.restUrls.map((url) => url.replace('127.0.0.1', 'localhost'));
  const metricsPorts = stack.processNames().filter((name) => !name.startsWith('temporal-')).length;
  return [
    '',
    'Bus booking service is running on a Temporal cluster.',
    `  REST API        ${apis.map((api) => `${api}/v1`).join('   ')}`,
    `  API docs        ${apis[0]}/docs   (OpenAPI: ${apis[0]}/openapi.yaml)`,
    `  Health          ${apis.map((api) => `${api}/readyz`).join('   ')}`,
    `  Metrics         ${listenerUrl({ host: config.metrics.api.host, port: settings.metricsPort })}/metrics ` +
      `… port ${settings.metricsPort + metricsPorts - 1}   (api-1, api-2, then each worker)`,
    ...grpcBannerLines(
      stack.grpcAddresses.map((address) => Number(address.split(':')[1])),
      stack.grpcCertificates,
    ),
    `  Temporal        ${stack.temporalAddress}   namespace ${stack.namespace}` +
      (temporalTls ? '   (mutual TLS)' : '   (plaintext: CLUSTER_TEMPORAL_TLS=false)'),
    ...(temporalTls
      ? [
          `  Temporal certs  ${temporalTls.certificates.directory}: ca.crt, client.crt + client.key ` +
            `(server name ${temporalTls.serverName})`,
        ]
      : []),
    `  Temporal tier   ${temporalServiceNames.join(', ')}   (no Web UI; use the temporal CLI)`,
    `  Processes       ${stack.processNames().length}, supervised; logs in ${stack.logDirectory}`,
    ...bannerFooterLines({
      config,
      postgresUrl: stack.databaseUrl,
      postgresDataDirectory: stack.postgres.dataDirectory,
      dataDirectory: settings.dataDirectory,
    }),
  ].join('\n');
}

if (require.main === module) {
  let stack: ClusterStack | undefined;
  runStack(
    'npm run stack:cluster',
    async (stopEverything) => {
      const startedAt = Date.now();
      stack = await startClusterStack({
        onGiveUp: (name) => {
          logger.error(`${name} cannot be kept running; stopping the stack`);
          void stopEverything(1);
        },
      });
      process.stdout.write(banner(stack));
      logger.info(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    },
    async () => stack?.stop(),
  );
}
