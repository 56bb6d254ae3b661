// `npm start`: the whole service on embedded parts — PostgreSQL, Temporal dev server, worker, REST and gRPC.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { loadConfig, loadStackConfig, type Config, type StackConfig } from '../config';
import { createLogger } from '../logger';
import { projectRoot } from '../project-root';
import { migrateWithDatabase } from '../db/migrate';
import { createDatabase } from '../db/connection';
import { seedDemoData, demoUsers } from '../db/seed';
import { createFieldCipherFromConfig } from '../security/field-cipher-from-config';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres';
import { startTemporalDevServer, type RunningTemporal } from './temporal-dev-server';
import { ServiceSupervisor } from './supervisor';
import { loadOrCreateDevelopmentSecrets } from './development-secrets';
import {
  loadOrCreateDevelopmentCertificates,
  type DevelopmentCertificates,
} from './development-certificates';

const logger = createLogger({ level: 'info', name: 'stack' });

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve(true)));
  });
}

async function assertPortsFree(stack: StackConfig): Promise<void> {
  // A metrics listener on a port picked at random could not be printed, nor scraped by a configured Prometheus.
  for (const [port, variable] of [
    [stack.metricsPort, 'METRICS_PORT'],
    [stack.workerMetricsPort, 'WORKER_METRICS_PORT'],
  ] as const) {
    if (port === 0) {
      throw new Error(`${variable}=0 would pick a port at random; set ${variable} to a free port`);
    }
  }
  const ports: [number, string][] = [
    [stack.httpPort, 'HTTP_PORT'],
    [stack.grpcPort, 'GRPC_PORT'],
    [stack.metricsPort, 'METRICS_PORT'],
    [stack.workerMetricsPort, 'WORKER_METRICS_PORT'],
    [stack.temporalPort, 'TEMPORAL_PORT'],
    [stack.temporalUiPort, 'TEMPORAL_UI_PORT'],
    [stack.postgresPort, 'EMBEDDED_POSTGRES_PORT'],
  ];
  const busy: string[] = [];
  for (const [port, variable] of ports) {
    if (!(await portIsFree(port))) busy.push(`port ${port} (${variable})`);
  }
  if (busy.length > 0) {
    throw new Error(
      `${busy.join(', ')} already in use: is another stack running? Stop it, or set the named variable to a free port`,
    );
  }
}

function temporalCliPath(): string {
  const { ensureTemporalCli } = require(path.join(projectRoot, 'scripts', 'temporal-cli.cjs')) as {
    ensureTemporalCli: () => string;
  };
  return ensureTemporalCli();
}

/** The worker or the API, restarted when it dies (see ServiceSupervisor); giving up stops the stack. */
function superviseService(
  name: string,
  entryPoint: string,
  environment: NodeJS.ProcessEnv,
  onGiveUp: () => void,
): ServiceSupervisor {
  return new ServiceSupervisor({
    name,
    command: process.execPath,
    args: [path.join(projectRoot, 'dist', 'src', entryPoint)],
    environment,
    log: {
      info: (message) => logger.info({ service: name }, message),
      error: (message) => logger.error({ service: name }, message),
    },
    onGiveUp,
  });
}

/** How a browser or curl on this machine reaches a listener bound to `host`. */
function listenerUrl(listener: { host: string; port: number }): string {
  const host = ['0.0.0.0', '::'].includes(listener.host) ? 'localhost' : listener.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${listener.port}`;
}

async function waitForReady(url: string, timeoutMs: number, services: ServiceSupervisor[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (services.some((service) => service.hasGivenUp))
      throw new Error('a service kept failing during start-up');
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
}

/**
 * Mutual TLS for gRPC with the stack's own certificates, unless the developer configured TLS files or asked for
 * plaintext; the allow-list admits the development client certificate unless one is configured.
 */
function grpcTlsEnvironment(dataDirectory: string): {
  certificates?: DevelopmentCertificates;
  environment: NodeJS.ProcessEnv;
} {
  const insecure = ['true', '1'].includes(process.env.GRPC_INSECURE?.trim().toLowerCase() ?? '');
  if (insecure || process.env.GRPC_TLS_CA) return { environment: {} };
  const certificates = loadOrCreateDevelopmentCertificates(dataDirectory);
  return {
    certificates,
    environment: {
      GRPC_TLS_CA: certificates.certificateAuthority,
      GRPC_TLS_CERT: certificates.server.certificate,
      GRPC_TLS_KEY: certificates.server.privateKey,
      GRPC_ALLOWED_CLIENTS: process.env.GRPC_ALLOWED_CLIENTS || certificates.clientIdentity,
    },
  };
}

function grpcBannerLines(stack: StackConfig, certificates: DevelopmentCertificates | undefined): string[] {
  if (!certificates) return [`  gRPC            localhost:${stack.grpcPort}`];
  return [
    `  gRPC            localhost:${stack.grpcPort}   (mutual TLS; example: npm run grpc:example)`,
    `  gRPC certs      ${certificates.directory}: ca.crt, client.crt + client.key (CN ${certificates.clientIdentity})`,
  ];
}

function banner(
  stack: StackConfig,
  config: Config,
  temporal: RunningTemporal,
  postgres: RunningPostgres,
  certificates: DevelopmentCertificates | undefined,
): string {
  const api = `http://localhost:${stack.httpPort}`;
  const logins = demoUsers.map(
    (user) => `    ${user.role.padEnd(9)} ${user.email.padEnd(28)} ${user.password}`,
  );
  return [
    '',
    'Bus booking service is running.',
    `  REST API        ${api}/v1   (also under ${api}/api)`,
    `  API docs        ${api}/docs   (OpenAPI: ${api}/openapi.yaml)`,
    `  Health          ${api}/healthz   ${api}/readyz`,
    `  Metrics         ${listenerUrl(config.metrics.api)}/metrics   (API: REST and gRPC requests)`,
    `  Worker metrics  ${listenerUrl(config.metrics.worker)}/metrics   (Temporal SDK and bookings; /healthz, /readyz)`,
    ...grpcBannerLines(stack, certificates),
    `  Temporal UI     ${temporal.uiUrl}   (frontend ${temporal.address}; payloads decoded by ${api}/codec)`,
    `  PostgreSQL      ${postgres.url.replace(/:[^:@/]+@/, ':***@')}`,
    `  Data folder     ${stack.dataDirectory}`,
    ...(postgres.dataDirectory.startsWith(stack.dataDirectory)
      ? []
      : [`  PostgreSQL data ${postgres.dataDirectory}   (linked from the data folder)`]),
    ...(config.notifications.transport === 'outbox'
      ? [
          `  Outbox          ${path.resolve(projectRoot, config.notifications.outboxDirectory)}   (emails, SMS)`,
        ]
      : []),
    '  Demo logins (POST /api/auth/login):',
    ...logins,
    'Press Ctrl-C to stop everything.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const stack = loadStackConfig(process.env, projectRoot);
  await assertPortsFree(stack);
  fs.mkdirSync(path.join(stack.dataDirectory, 'logs'), { recursive: true });
  const secrets = loadOrCreateDevelopmentSecrets(stack.dataDirectory);
  const grpcTls = grpcTlsEnvironment(stack.dataDirectory);
  const executable = temporalCliPath();

  const running: { stop(): Promise<void> }[] = [];
  const services: ServiceSupervisor[] = [];
  let stopping = false;
  const stopEverything = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping the stack');
    // The services first, so none is restarted while PostgreSQL and Temporal go away under it.
    await Promise.allSettled(services.map((service) => service.stop(10_000)));
    for (const part of running.reverse()) await part.stop().catch(() => undefined);
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void stopEverything(0));
  process.once('SIGTERM', () => void stopEverything(0));

  try {
    logger.info('starting PostgreSQL and the Temporal dev server');
    const [postgres, temporal] = await Promise.all([
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
    ]);

    const environment: NodeJS.ProcessEnv = {
      ...process.env,
      ...secrets,
      ...grpcTls.environment,
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: stack.namespace,
      HTTP_PORT: String(stack.httpPort),
      GRPC_PORT: String(stack.grpcPort),
      CODEC_CORS_ORIGINS:
        process.env.CODEC_CORS_ORIGINS ??
        `http://localhost:${stack.temporalUiPort},http://127.0.0.1:${stack.temporalUiPort}`,
    };
    const config = loadConfig(environment);

    logger.info('applying migrations and demo data');
    const database = createDatabase(postgres.url, { poolSize: 2 });
    try {
      await migrateWithDatabase(database);
      await seedDemoData(database, {
        cipher: createFieldCipherFromConfig(config),
        today: new Date(),
        environment: config.environment,
      });
    } finally {
      await database.destroy();
    }

    for (const [name, entryPoint] of [
      ['worker', 'worker/main.js'],
      ['api', 'api/main.js'],
    ] as const) {
      const service = superviseService(name, entryPoint, environment, () => {
        logger.error(`${name} cannot be kept running; stopping the stack`);
        void stopEverything(1);
      });
      services.push(service);
      service.start();
    }
    await waitForReady(`http://127.0.0.1:${stack.httpPort}/readyz`, 120_000, services);
    process.stdout.write(banner(stack, config, temporal, postgres, grpcTls.certificates));
  } catch (error) {
    logger.fatal(
      { err: error },
      `failed to start: ${error instanceof Error ? error.message : String(error)}`,
    );
    await stopEverything(1);
  }
}

main().catch((error: unknown) => {
  // Failures before anything started (busy ports, bad settings) need one clear line, not a stack trace.
  process.stderr.write(`npm start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
