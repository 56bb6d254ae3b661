// Starts the real parts once per test run: PostgreSQL (embedded unless DATABASE_URL), a Temporal dev server and
// localstripe (unless LOCALSTRIPE_URL).
import { tsImport } from 'tsx/esm/api';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const projectRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

// The stack's own runner, so tests start PostgreSQL the way `npm start` does (root in a private folder included).
async function startPostgres() {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  const { startEmbeddedPostgres } = await tsImport('../../dev/stack/embedded-postgres.ts', import.meta.url);
  const { withFreePort } = await tsImport('./ports.ts', import.meta.url);
  // PostgreSQL takes a port number, not a socket: the port is held from other processes until it binds, and a start
  // that finds it taken all the same is tried again on another (its data folder is made anew each time).
  return withFreePort((port) =>
    startEmbeddedPostgres({
      dataDirectory: fs.mkdtempSync(path.join(os.tmpdir(), 'bookings-test-pg-')),
      port,
      databaseName: 'bookings_test',
      persistent: false,
    }),
  );
}

// The SDK picks the dev server's port the way ports.ts does (held in TIME_WAIT until the server binds it).
async function startTemporal() {
  if (process.env.TEMPORAL_ADDRESS) return { address: process.env.TEMPORAL_ADDRESS, stop: async () => {} };
  const { TestWorkflowEnvironment } = require('@temporalio/testing');
  const { ensureTemporalCli } = require(path.join(projectRoot, 'scripts/temporal-cli.cjs'));
  const { allSearchAttributes } = await tsImport('../../src/workflows/shared.ts', import.meta.url);
  const environment = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: ensureTemporalCli() },
      searchAttributes: allSearchAttributes,
      ip: '127.0.0.1',
      log: { format: 'pretty', level: 'warn' },
    },
  });
  return {
    address: environment.address,
    stop: () => environment.teardown(),
  };
}

// Started with the others, not on first use: it answers in a fraction of a second, well within their start.
async function startLocalstripe() {
  if (process.env.LOCALSTRIPE_URL) return { url: process.env.LOCALSTRIPE_URL, stop: async () => {} };
  const { ensureLocalstripe } = require(path.join(projectRoot, 'scripts/localstripe.cjs'));
  const { startLocalstripe: start } = await tsImport('./localstripe.ts', import.meta.url);
  return start(ensureLocalstripe());
}

export default async function globalSetup() {
  const [postgres, temporal, localstripe] = await Promise.all([
    startPostgres(),
    startTemporal(),
    startLocalstripe(),
  ]);
  process.env.DATABASE_URL = postgres.url;
  process.env.TEMPORAL_ADDRESS = temporal.address;
  process.env.LOCALSTRIPE_URL = localstripe.url;
  const { migrateToLatest } = await tsImport('../../src/db/migrate.ts', import.meta.url);
  await migrateToLatest(postgres.url);
  globalThis.__bookingTestServers = { postgres, temporal, localstripe };
}
