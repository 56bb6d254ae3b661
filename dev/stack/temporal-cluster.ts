// The real Temporal server as a cluster of separate processes (frontend, two history, matching, worker) on
// PostgreSQL, set up by the same scripts docker-compose.yml runs (deploy/postgresql/initdb, deploy/temporal).
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { grpc } from '@temporalio/proto';
import pg from 'pg';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { projectRoot } from '../../src/project-root';
import { temporalConnectionOptions } from '../../src/security/temporal-connection';
import { ServiceSupervisor } from './supervisor';
import {
  loadOrCreateDevelopmentCertificates,
  type DevelopmentCertificates,
} from './development-certificates';

/** Where scripts/temporal-server.sh put the binaries and the module's schema and config templates. */
export interface TemporalServerInstallation {
  binDirectory: string;
  server: string;
  sqlTool: string;
  schemaDirectory: string;
  configDirectory: string;
}

/** Builds the pinned server on first use (minutes), then answers from its cache. */
export async function installTemporalServer(): Promise<TemporalServerInstallation> {
  const script = path.join(projectRoot, 'scripts', 'temporal-server.sh');
  // The build's progress (stderr) is worth seeing on a first run; stdout is the bin folder alone.
  const binDirectory = await new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(stdout.trim());
      else reject(new Error(`scripts/temporal-server.sh exited with code ${code}`));
    });
  });
  const supportDirectory = path.join(binDirectory, '..', 'temporal-server');
  return {
    binDirectory,
    server: path.join(binDirectory, 'temporal-server'),
    sqlTool: path.join(binDirectory, 'temporal-sql-tool'),
    schemaDirectory: path.join(supportDirectory, 'schema'),
    configDirectory: path.join(supportDirectory, 'config'),
  };
}

/** The Temporal tier's process names, in start order (the frontend first: the worker service dials it). */
export const temporalServiceNames = [
  'temporal-frontend',
  'temporal-history-1',
  'temporal-history-2',
  'temporal-matching',
  'temporal-worker',
] as const;
export type TemporalServiceName = (typeof temporalServiceNames)[number];

interface ServicePorts {
  service: 'frontend' | 'history' | 'matching' | 'worker';
  grpc: number;
  membership: number;
  metrics: number;
}

export interface TemporalClusterPorts {
  /** The frontend's gRPC port; history-1, history-2, matching, worker and the frontend's HTTP API take the next five. */
  frontend: number;
  /** Membership (gossip) ports, one per service from this one on; below 32768 (stored as smallint). */
  membership: number;
  /** Prometheus ports, one per service from this one on. */
  metrics: number;
}

/** Every port the Temporal tier binds, with the variable that moves it (for the stack's port check). */
export function temporalClusterPortList(
  ports: TemporalClusterPorts,
  variables: { frontend: string; membership: string; metrics: string },
): [number, string][] {
  return [
    ...[0, 1, 2, 3, 4, 5].map((offset): [number, string] => [
      ports.frontend + offset,
      `${variables.frontend}${offset === 0 ? '' : ` + ${offset}`}`,
    ]),
    ...[0, 1, 2, 3, 4].map((offset): [number, string] => [
      ports.membership + offset,
      `${variables.membership}${offset === 0 ? '' : ` + ${offset}`}`,
    ]),
    ...[0, 1, 2, 3, 4].map((offset): [number, string] => [
      ports.metrics + offset,
      `${variables.metrics}${offset === 0 ? '' : ` + ${offset}`}`,
    ]),
  ];
}

function servicePorts(ports: TemporalClusterPorts): Record<TemporalServiceName, ServicePorts> {
  const at = (offset: number, service: ServicePorts['service']): ServicePorts => ({
    service,
    grpc: ports.frontend + offset,
    membership: ports.membership + offset,
    metrics: ports.metrics + offset,
  });
  return {
    'temporal-frontend': at(0, 'frontend'),
    'temporal-history-1': at(1, 'history'),
    'temporal-history-2': at(2, 'history'),
    'temporal-matching': at(3, 'matching'),
    'temporal-worker': at(4, 'worker'),
  };
}

export interface TemporalClusterTls {
  certificates: DevelopmentCertificates;
  /** The name the frontend's certificate carries and clients check. */
  serverName: string;
}

/**
 * The frontend's mutual TLS material under `<dataDirectory>/certs`: a CA, the frontend's certificate (localhost,
 * 127.0.0.1) and a client certificate the booking processes and the server's own system workers present.
 */
export function loadOrCreateTemporalCertificates(dataDirectory: string): TemporalClusterTls {
  return { certificates: loadOrCreateDevelopmentCertificates(dataDirectory), serverName: 'localhost' };
}

/** Database roles the cluster stack uses; passwords made once per data folder. */
export interface ClusterDatabasePasswords {
  booking: string;
  temporal: string;
}

export function loadOrCreateDatabasePasswords(dataDirectory: string): ClusterDatabasePasswords {
  const file = path.join(dataDirectory, 'database-passwords.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as ClusterDatabasePasswords;
  // Hex: safe inside a URL and a psql variable without escaping.
  const passwords = {
    booking: crypto.randomBytes(18).toString('hex'),
    temporal: crypto.randomBytes(18).toString('hex'),
  };
  fs.mkdirSync(dataDirectory, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(passwords, null, 2)}\n`, { mode: 0o600 });
  return passwords;
}

async function runScript(
  script: string,
  environment: NodeJS.ProcessEnv,
  logFile: string,
  what: string,
): Promise<void> {
  const log = fs.openSync(logFile, 'a');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = execFile('sh', [script], { env: environment }, (error) => {
        if (error) reject(new Error(`${what} failed (${error.message.split('\n')[0]}); its log: ${logFile}`));
        else resolve();
      });
      child.stdout?.on('data', (chunk: Buffer) => fs.writeSync(log, chunk));
      child.stderr?.on('data', (chunk: Buffer) => fs.writeSync(log, chunk));
    });
  } finally {
    fs.closeSync(log);
  }
}

/** Ports and paths the setup scripts need; the booking and Temporal roles log in with these passwords. */
export interface DatabaseServer {
  host: string;
  port: number;
  superuser: string;
  superuserPassword: string;
}

/**
 * The databases and roles, made by the compose stack's PostgreSQL init script (once, when the `temporal` database is
 * missing), then Temporal's schema by deploy/temporal/setup-schema.sh (every start: it only applies what is new).
 */
export async function prepareTemporalDatabases(options: {
  database: DatabaseServer;
  passwords: ClusterDatabasePasswords;
  installation: TemporalServerInstallation;
  logFile: string;
}): Promise<void> {
  const { database, passwords, installation, logFile } = options;
  const client = new pg.Client({
    host: database.host,
    port: database.port,
    user: database.superuser,
    password: database.superuserPassword,
    database: 'postgres',
  });
  await client.connect();
  let initialised: boolean;
  try {
    const found = await client.query("select 1 from pg_database where datname = 'temporal'");
    initialised = (found.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
  if (!initialised) {
    await runScript(
      path.join(projectRoot, 'deploy', 'postgresql', 'initdb', '10-create-databases.sh'),
      {
        PATH: process.env.PATH,
        PGHOST: database.host,
        PGPORT: String(database.port),
        PGPASSWORD: database.superuserPassword,
        POSTGRES_USER: database.superuser,
        BOOKING_DB_PASSWORD: passwords.booking,
        TEMPORAL_DB_PASSWORD: passwords.temporal,
      },
      logFile,
      'creating the databases (deploy/postgresql/initdb/10-create-databases.sh; it needs psql on PATH)',
    );
  }
  await runScript(
    path.join(projectRoot, 'deploy', 'temporal', 'setup-schema.sh'),
    {
      PATH: `${installation.binDirectory}${path.delimiter}${process.env.PATH ?? ''}`,
      TEMPORAL_SCHEMA_DIR: installation.schemaDirectory,
      SQL_PLUGIN: 'postgres12',
      SQL_HOST: database.host,
      SQL_PORT: String(database.port),
      SQL_USER: 'temporal',
      SQL_PASSWORD: passwords.temporal,
    },
    logFile,
    "Temporal's schema setup (deploy/temporal/setup-schema.sh)",
  );
}

/** The parts of the module's development-postgres12.yaml this stack changes; the rest is kept as it is. */
interface ServerConfigTemplate {
  log: unknown;
  persistence: { numHistoryShards: number; datastores: Record<string, { sql: Record<string, unknown> }> };
  global: { pprof?: unknown; metrics: { prometheus: { listenAddress: string } }; tls?: unknown };
  services: unknown;
  clusterMetadata: { clusterInformation: { active: { rpcAddress: string } } };
  publicClient?: unknown;
  archival?: unknown;
  namespaceDefaults?: unknown;
  dynamicConfigClient: unknown;
}

/**
 * The server configuration, adapted from the module's development-postgres12.yaml: PostgreSQL and passwords, our
 * ports, mutual TLS on the frontend, and a dynamic config file beside it (the compose stack's plus what the dev
 * server turns on). One file serves every process; the two history processes differ by their environment
 * (the file is a Go template, rendered by the server when it starts).
 */
export function writeTemporalServerConfig(options: {
  directory: string;
  installation: TemporalServerInstallation;
  database: { host: string; port: number; password: string };
  ports: TemporalClusterPorts;
  historyShards: number;
  tls: TemporalClusterTls | undefined;
}): string {
  const { directory, installation, database, ports, tls } = options;
  fs.mkdirSync(directory, { recursive: true });
  const template = parseYaml(
    fs.readFileSync(path.join(installation.configDirectory, 'development-postgres12.yaml'), 'utf8'),
  ) as ServerConfigTemplate;

  const dynamicConfigFile = path.join(directory, 'dynamicconfig.yaml');
  const dynamicConfig = {
    ...(parseYaml(
      fs.readFileSync(path.join(projectRoot, 'deploy', 'temporal', 'dynamicconfig', 'booking.yaml'), 'utf8'),
    ) as Record<string, unknown>),
    // As the dev server does: a search attribute registered by setup-namespace.sh is usable at once, and an update's
    // caller may return once it is accepted.
    'system.forceSearchAttributesCacheRefreshOnRead': [{ value: true, constraints: {} }],
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted': [{ value: true, constraints: {} }],
  };
  fs.writeFileSync(
    dynamicConfigFile,
    `# Made by the cluster stack from deploy/temporal/dynamicconfig/booking.yaml; rewritten on every start.\n${stringifyYaml(dynamicConfig)}`,
  );

  const connectAddr = `${database.host}:${database.port}`;
  for (const store of Object.values(template.persistence.datastores)) {
    store.sql.connectAddr = connectAddr;
    store.sql.user = 'temporal';
    store.sql.password = database.password;
  }
  template.persistence.numHistoryShards = options.historyShards;
  template.log = { stdout: true, level: 'warn' };
  delete template.global.pprof;
  template.global.metrics.prometheus.listenAddress = '127.0.0.1:{{ env "TEMPORAL_SERVICE_METRICS_PORT" }}';
  const byService = servicePorts(ports);
  template.services = {
    frontend: {
      rpc: {
        grpcPort: byService['temporal-frontend'].grpc,
        membershipPort: byService['temporal-frontend'].membership,
        bindOnLocalHost: true,
        httpPort: ports.frontend + 5,
      },
    },
    // Placeholders, replaced below by template expressions the server renders per process.
    history: { rpc: { grpcPort: -1, membershipPort: -2, bindOnLocalHost: true } },
    matching: {
      rpc: {
        grpcPort: byService['temporal-matching'].grpc,
        membershipPort: byService['temporal-matching'].membership,
        bindOnLocalHost: true,
      },
    },
    worker: {
      rpc: {
        grpcPort: byService['temporal-worker'].grpc,
        membershipPort: byService['temporal-worker'].membership,
        bindOnLocalHost: true,
      },
    },
  };
  template.clusterMetadata.clusterInformation.active.rpcAddress = `localhost:${ports.frontend}`;
  template.publicClient = { hostPort: `localhost:${ports.frontend}` };
  // Archival needs folders nobody reads here; the booking namespace keeps its history for its retention only.
  delete template.archival;
  delete template.namespaceDefaults;
  template.dynamicConfigClient = { filepath: dynamicConfigFile, pollInterval: '10s' };
  if (tls) {
    const { certificates, serverName } = tls;
    template.global.tls = {
      frontend: {
        server: {
          certFile: certificates.server.certificate,
          keyFile: certificates.server.privateKey,
          requireClientAuth: true,
          clientCaFiles: [certificates.certificateAuthority],
        },
        client: { serverName, rootCaFiles: [certificates.certificateAuthority] },
      },
      // The worker service's system workflows are clients of the frontend like any other: they show a certificate.
      systemWorker: {
        certFile: certificates.client.certificate,
        keyFile: certificates.client.privateKey,
        client: { serverName, rootCaFiles: [certificates.certificateAuthority] },
      },
    };
  }

  const rendered = stringifyYaml(template)
    .replace('grpcPort: -1', 'grpcPort: {{ env "TEMPORAL_SERVICE_GRPC_PORT" }}')
    .replace('membershipPort: -2', 'membershipPort: {{ env "TEMPORAL_SERVICE_MEMBERSHIP_PORT" }}');
  const file = path.join(directory, 'temporal.yaml');
  fs.writeFileSync(
    file,
    [
      '# enable-template',
      '# Made by the cluster stack from the server module`s config/development-postgres12.yaml; rewritten on every',
      '# start. The history section and the metrics address read the environment each process is started with.',
      rendered,
    ].join('\n'),
    { mode: 0o600 },
  );
  return file;
}

export interface TemporalClusterLog {
  info(message: string): void;
  error(message: string): void;
}

export interface RunningTemporalCluster {
  address: string;
  /** Supervised processes by name; a killed one is restarted by its supervisor. */
  supervisor(name: TemporalServiceName): ServiceSupervisor;
  /** Stops every Temporal process, then starts them all again and waits until the frontend answers. */
  restart(): Promise<void>;
  /** None of the processes is restarted from now on (the stack is stopping). */
  holdRestarts(): void;
  stop(): Promise<void>;
}

/** Options of a frontend connection from this process (readiness checks), mutual TLS as the booking processes use it. */
function frontendConnectionOptions(
  address: string,
  tls: TemporalClusterTls | undefined,
): Parameters<typeof Connection.connect>[0] {
  return {
    ...temporalConnectionOptions({
      address,
      ...(tls === undefined
        ? {}
        : {
            tls: {
              serverName: tls.serverName,
              serverCa: {
                variable: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
                path: tls.certificates.certificateAuthority,
              },
              clientCertificate: {
                certificate: {
                  variable: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
                  path: tls.certificates.client.certificate,
                },
                privateKey: {
                  variable: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
                  path: tls.certificates.client.privateKey,
                },
              },
            },
          }),
    }),
    connectTimeout: 2000,
  };
}

/** Waits until the frontend reports SERVING on the gRPC health protocol. */
export async function waitForFrontend(options: {
  address: string;
  tls: TemporalClusterTls | undefined;
  timeoutMs: number;
  gaveUp: () => boolean;
}): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const connectionOptions = frontendConnectionOptions(options.address, options.tls);
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (options.gaveUp()) throw new Error('a Temporal service kept failing during start-up');
    try {
      const connection = await Connection.connect(connectionOptions);
      try {
        const answer = await connection.healthService.check({});
        if (answer.status === grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING) return;
        lastError = new Error(`health status ${answer.status}`);
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(
    `the Temporal frontend at ${options.address} was not healthy within ${options.timeoutMs / 1000} s: ${String(lastError)}`,
  );
}

/** Starts the five Temporal processes from one config file, each supervised, each logging to its own file. */
export async function startTemporalCluster(options: {
  installation: TemporalServerInstallation;
  configFile: string;
  ports: TemporalClusterPorts;
  tls: TemporalClusterTls | undefined;
  logDirectory: string;
  log: TemporalClusterLog;
  onGiveUp: (name: TemporalServiceName) => void;
}): Promise<RunningTemporalCluster> {
  const { installation, configFile, ports, tls, logDirectory, log } = options;
  const address = `127.0.0.1:${ports.frontend}`;
  const byService = servicePorts(ports);
  const logs = new Map<TemporalServiceName, number>(
    temporalServiceNames.map((name) => [name, fs.openSync(path.join(logDirectory, `${name}.log`), 'a')]),
  );
  let supervisors = new Map<TemporalServiceName, ServiceSupervisor>();

  const gaveUp = () => [...supervisors.values()].some((supervisor) => supervisor.hasGivenUp);
  // The frontend alone first: every service records the cluster's metadata when it starts, and on a new database
  // several at once race to insert it (the losers exit and would be restarted). Then the rest, together.
  const startAll = async () => {
    supervisors = new Map(
      temporalServiceNames.map((name) => {
        const { service, grpc, membership, metrics } = byService[name];
        const output = logs.get(name) as number;
        const supervisor = new ServiceSupervisor({
          name,
          command: installation.server,
          args: ['--config-file', configFile, '--allow-no-auth', 'start', '--service', service],
          // Only what the server needs: a TEMPORAL_* variable of the caller's shell must not reconfigure it.
          environment: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            TEMPORAL_SERVICE_GRPC_PORT: String(grpc),
            TEMPORAL_SERVICE_MEMBERSHIP_PORT: String(membership),
            TEMPORAL_SERVICE_METRICS_PORT: String(metrics),
          },
          stdio: ['ignore', output, output],
          log: { info: (message) => log.info(message), error: (message) => log.error(message) },
          onGiveUp: () => options.onGiveUp(name),
        });
        return [name, supervisor];
      }),
    );
    const [first, ...rest] = temporalServiceNames;
    supervisors.get(first)?.start();
    await waitForFrontend({ address, tls, timeoutMs: 120_000, gaveUp });
    for (const name of rest) supervisors.get(name)?.start();
  };
  const stopAll = () =>
    Promise.allSettled([...supervisors.values()].map((supervisor) => supervisor.stop(15_000))).then(
      () => undefined,
    );

  try {
    await startAll();
  } catch (error) {
    await stopAll();
    throw error;
  }
  return {
    address,
    supervisor: (name) => {
      const supervisor = supervisors.get(name);
      if (!supervisor) throw new Error(`no Temporal service named ${name}`);
      return supervisor;
    },
    restart: async () => {
      log.info('restarting every Temporal service');
      await stopAll();
      await startAll();
      log.info('the Temporal services are back');
    },
    holdRestarts: () => {
      for (const supervisor of supervisors.values()) supervisor.holdRestarts();
    },
    stop: async () => {
      await stopAll();
      for (const descriptor of logs.values()) fs.closeSync(descriptor);
    },
  };
}

/**
 * The namespace and the booking search attributes, by deploy/temporal/setup-namespace.sh with the `temporal` CLI
 * (over mutual TLS when the frontend asks for it).
 */
export async function setUpNamespace(options: {
  cliExecutable: string;
  address: string;
  namespace: string;
  tls: TemporalClusterTls | undefined;
  logFile: string;
}): Promise<void> {
  const { tls } = options;
  await runScript(
    path.join(projectRoot, 'deploy', 'temporal', 'setup-namespace.sh'),
    {
      PATH: `${path.dirname(options.cliExecutable)}${path.delimiter}${process.env.PATH ?? ''}`,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: options.address,
      TEMPORAL_NAMESPACE: options.namespace,
      ...(tls && {
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.certificates.certificateAuthority,
        TEMPORAL_TLS_CLIENT_CERT_PATH: tls.certificates.client.certificate,
        TEMPORAL_TLS_CLIENT_KEY_PATH: tls.certificates.client.privateKey,
        TEMPORAL_TLS_SERVER_NAME: tls.serverName,
      }),
    },
    options.logFile,
    'the namespace set-up (deploy/temporal/setup-namespace.sh)',
  );
}
