// Pieces both embedded stacks share (`npm start` and `npm run stack:cluster`): port checks, supervised booking
// processes, readiness, gRPC certificates, migrations and demo data, the banner's common lines, orderly stop.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { StdioOptions } from 'node:child_process';
import { loadLogFormat, type Config } from '../../src/config';
import { createLogger, logFormatFor, synchronousStandardOutput } from '../../src/logger';
import { projectRoot } from '../../src/project-root';
import { migrateWithDatabase } from '../../src/db/migrate';
import { createDatabase } from '../../src/db/connection';
import { seedDemoData, demoUsers } from '../seed';
import { createFieldCipherFromConfig } from '../../src/security/field-cipher-from-config';
import { nodeFlagsOf } from '../../src/runtime/node-flags';
import { ServiceSupervisor } from './supervisor';
import {
  loadOrCreateDevelopmentCertificates,
  type DevelopmentCertificates,
} from './development-certificates';

/**
 * How the stack's own lines are written, handed to the processes whose output joins them (as LOG_FORMAT), so one
 * terminal shows one format: LOG_FORMAT, else pretty when standard output is a terminal.
 */
export const stackLogFormat = logFormatFor(loadLogFormat(), process.stdout.isTTY === true);

// Synchronous: the stack writes its banner to standard output itself, after lines that must come before it.
export const stackLogger = createLogger(
  { level: 'info', name: 'stack', format: stackLogFormat },
  synchronousStandardOutput(),
);

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve(true)));
  });
}

/** Stops the start with one message naming the variable behind each busy port. */
export async function assertPortsFree(ports: readonly (readonly [number, string])[]): Promise<void> {
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

export function temporalCliPath(): string {
  const { ensureTemporalCli } = require(path.join(projectRoot, 'scripts', 'temporal-cli.cjs')) as {
    ensureTemporalCli: () => string;
  };
  return ensureTemporalCli();
}

/**
 * A booking process (`worker/main.js`, `api/main.js` under dist/src), restarted when it dies (see
 * ServiceSupervisor); giving up stops the stack. Without a log file its output goes to the stack's own.
 */
export function superviseBookingProcess(options: {
  name: string;
  entryPoint: string;
  environment: NodeJS.ProcessEnv;
  logFile?: string;
  onGiveUp: () => void;
}): ServiceSupervisor {
  const { name } = options;
  let stdio: StdioOptions | undefined;
  if (options.logFile !== undefined) {
    // Opened once and kept: every restart of the process appends to the same file.
    const log = fs.openSync(options.logFile, 'a');
    stdio = ['ignore', log, log];
  }
  return new ServiceSupervisor({
    name,
    command: process.execPath,
    args: [...nodeFlagsOf(options.entryPoint), path.join(projectRoot, 'dist', 'src', options.entryPoint)],
    environment: options.environment,
    ...(stdio && { stdio }),
    log: {
      info: (message) => stackLogger.info({ service: name }, message),
      error: (message) => stackLogger.error({ service: name }, message),
    },
    onGiveUp: options.onGiveUp,
  });
}

/** How a browser or curl on this machine reaches a listener bound to `host`. */
export function listenerUrl(listener: { host: string; port: number }): string {
  const host = ['0.0.0.0', '::'].includes(listener.host) ? 'localhost' : listener.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${listener.port}`;
}

export async function waitForReady(
  url: string,
  timeoutMs: number,
  services: readonly ServiceSupervisor[],
): Promise<void> {
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
export function grpcTlsEnvironment(dataDirectory: string): {
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

export function grpcBannerLines(
  grpcPorts: readonly number[],
  certificates: DevelopmentCertificates | undefined,
): string[] {
  const addresses = grpcPorts.map((port) => `localhost:${port}`).join('   ');
  if (!certificates) return [`  gRPC            ${addresses}`];
  return [
    `  gRPC            ${addresses}   (mutual TLS; example: npm run grpc:example)`,
    `  gRPC certs      ${certificates.directory}: ca.crt, client.crt + client.key (CN ${certificates.clientIdentity})`,
  ];
}

/** The banner's closing lines: where PostgreSQL, the data and the outbox are, the demo logins, how to stop. */
export function bannerFooterLines(options: {
  config: Config;
  postgresUrl: string;
  postgresDataDirectory: string;
  dataDirectory: string;
}): string[] {
  const { config, dataDirectory, postgresDataDirectory } = options;
  const logins = demoUsers.map(
    (user) => `    ${user.role.padEnd(9)} ${user.email.padEnd(28)} ${user.password}`,
  );
  return [
    `  PostgreSQL      ${options.postgresUrl.replace(/:[^:@/]+@/, ':***@')}`,
    `  Data folder     ${dataDirectory}`,
    ...(postgresDataDirectory.startsWith(dataDirectory)
      ? []
      : [`  PostgreSQL data ${postgresDataDirectory}   (linked from the data folder)`]),
    ...(config.notifications.transport === 'outbox'
      ? [
          `  Outbox          ${path.resolve(projectRoot, config.notifications.outboxDirectory)}   (emails, SMS)`,
        ]
      : []),
    '  Demo logins (POST /api/auth/login):',
    ...logins,
    'Press Ctrl-C to stop everything.',
    '',
  ];
}

/** The booking database's migrations and demo data, as every start applies them. */
export async function migrateAndSeed(databaseUrl: string, config: Config): Promise<void> {
  const database = createDatabase(databaseUrl, { poolSize: 2 });
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
}

/**
 * Runs `start` and stops the stack on Ctrl-C, SIGTERM or a failed start: `stop` gets the exit code. Failures before
 * anything started (busy ports, bad settings) need one clear line, not a stack trace.
 */
export function runStack(
  command: string,
  start: (stopEverything: (exitCode: number) => Promise<void>) => Promise<void>,
  stop: () => Promise<void>,
): void {
  let stopping = false;
  const stopEverything = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    stackLogger.info('stopping the stack');
    await stop().catch((error: unknown) =>
      stackLogger.error({ err: error }, 'the stack did not stop cleanly'),
    );
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void stopEverything(0));
  process.once('SIGTERM', () => void stopEverything(0));
  start(stopEverything).catch(async (error: unknown) => {
    process.stderr.write(`${command}: ${error instanceof Error ? error.message : String(error)}\n`);
    await stopEverything(1);
  });
}
