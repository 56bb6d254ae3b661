// The chaos run of `npm run test:cluster`: a booking load on the cluster stack while processes are killed one by one
// and the Temporal tier restarted, then the invariant scan; prints the figures, exits non-zero on any violation.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { bookingIdForRequest } from '../../src/application/request-ids';
import { createDatabase } from '../../src/db/connection';
import { createFieldCipherFromConfig } from '../../src/security/field-cipher-from-config';
import { createBookingDataConverter } from '../../src/security/temporal-payload-codec';
import { temporalConnectionOptions } from '../../src/security/temporal-connection';
import { startClusterStack, type ClusterStack } from '../../dev/stack/cluster';
import { benchInventoryEmail, seedInventory } from '../../bench/lib/inventory';
import { formatInvariantReport, scanInvariants } from './invariants/scan';
import { waitForSettledWorkflows } from './invariants/scope';
import { BookingLoad, SeatPool, defaultLoadOptions, type UnresolvedCreate } from './load/booking-load';
import {
  resolveHandedOutIds,
  runCreateStorm,
  type CreateStormResult,
  type IdResolution,
} from './load/create-storm';
import { reSignInWith, signInCustomers } from './load/customers';
import { grpcFront, restFront, type Front } from './load/fronts';
import { requestKinds, type ChaosEvent, type RequestLog } from './load/request-log';
import type { Knex } from 'knex';
import { sleep, waitUntil } from './support/waiting';

const usage = `tsx test/cluster/chaos-run.ts [options]
  --customers <n>          customers acting at once (${defaultLoadOptions.customers})
  --rate <n>               requests per second at most (${defaultLoadOptions.requestsPerSecond})
  --spacing <s>            at least this long between two kills (20)
  --recovery-timeout <s>   a kill the service has not recovered from after this long fails the run (180)
  --settle-timeout <s>     how long in-flight work may take to finish after the load (180)
  --storm <s>              how long the create storm lasts after the kills (40)
  --storm-kill-every <s>   SIGKILLs every this long during the storm (5; the bookings workers every other time,
                           four times at most: the stack's supervisor gives up on a fifth quick failure)
  --keep                   keep the stack's data folder (logs) even when the run passes
Ports: the cluster stack's CLUSTER_* variables (README); the data lives in a fresh folder under the system's temp.`;

const chaosSteps = [
  'temporal-history-1',
  'temporal-matching',
  'worker-bookings-1',
  'worker-booking-seats',
  'worker-booking-payments',
  'worker-booking-notifications',
  'api-1',
  'temporal tier restart',
] as const;

/**
 * Killed in turn during the create storm: the bookings workers (both at once, so no create's seats are held in
 * time) hold the seats, the APIs hand out the ids.
 */
const bookingsWorkers = ['worker-bookings-1', 'worker-bookings-2'];
const stormVictims = [bookingsWorkers, ['api-1'], bookingsWorkers, ['api-2']];

/** Rows 3 to 10 of the bench bus are free standard seats on every trip of the bench inventory. */
const freeSeatNumbers = Array.from({ length: 8 }, (_, row) =>
  ['A', 'B', 'C', 'D', 'E'].map((letter) => `${row + 3}${letter}`),
).flat();

const seconds = (ms: number | undefined) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`);

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

interface StepResult {
  event: ChaosEvent;
  /** From the kill until the supervisor had the process running again (the tier: until the frontend was healthy). */
  backAfterMs: number | undefined;
  /** From the kill until a create started after the process was back was answered OK. */
  recoveredAfterMs: number | undefined;
}

async function runStep(
  stack: ClusterStack,
  step: (typeof chaosSteps)[number],
  log: RequestLog,
  spacingMs: number,
  recoveryTimeoutMs: number,
): Promise<StepResult> {
  const at = Date.now();
  let backAt: number | undefined;
  if (step === 'temporal tier restart') {
    await stack.restartTemporalTier();
    backAt = Date.now();
  } else {
    const before = stack.pid(step);
    stack.kill(step, 'SIGKILL');
    const back = await waitUntil(() => {
      const pid = stack.pid(step);
      return pid !== undefined && pid !== before;
    }, recoveryTimeoutMs);
    if (back) backAt = Date.now();
  }
  const event: ChaosEvent = { name: step, at, doneAt: backAt ?? Date.now() };
  const since = backAt ?? at;
  const recovered = await waitUntil(
    () => log.okSince(since, 'create'),
    Math.max(0, at + recoveryTimeoutMs - Date.now()),
  );
  const recoveredAfterMs = recovered
    ? Math.min(
        ...log.records
          .filter(
            (record) => record.kind === 'create' && record.outcome === 'ok' && record.startedAt >= since,
          )
          .map((record) => record.endedAt),
      ) - at
    : undefined;
  await sleep(Math.max(0, at + spacingMs - Date.now()));
  return { event, backAfterMs: backAt === undefined ? undefined : backAt - at, recoveredAfterMs };
}

/** What became of the creates the client never saw answered: a booking made behind a lost answer, or nothing. */
async function resolveCreates(
  database: Knex,
  creates: readonly UnresolvedCreate[],
): Promise<{ made: string[]; notMade: number }> {
  const made: string[] = [];
  let notMade = 0;
  for (const create of creates) {
    let bookingId = create.bookingId;
    if (bookingId === undefined && create.protocol === 'grpc') {
      bookingId = bookingIdForRequest({ userId: create.customer.userId }, create.key);
    }
    if (bookingId === undefined) {
      const key: { reserved_id: string } | undefined = await database('idempotency_keys')
        .where({ customer_id: create.customer.userId, key: create.key })
        .first('reserved_id');
      bookingId = key?.reserved_id;
    }
    const exists =
      bookingId !== undefined &&
      (await database('bookings').where({ id: bookingId }).first('id')) !== undefined;
    if (exists && bookingId !== undefined) made.push(bookingId);
    else notMade += 1;
  }
  return { made, notMade };
}

function printRequestFigures(
  load: BookingLoad,
  steps: readonly StepResult[],
  loadStartedAt: number,
  loadEndedAt: number,
): void {
  const total = load.log.countsBetween(loadStartedAt, loadEndedAt + 1);
  say(`requests over the whole load (${seconds(loadEndedAt - loadStartedAt)}): ${load.log.records.length}`);
  for (const kind of requestKinds) {
    const counts = total[kind];
    if (counts.ok + counts.refused + counts.processing + counts.failed === 0) continue;
    say(
      `  ${kind.padEnd(7)} ok ${counts.ok}, refused ${counts.refused}, still processing ${counts.processing}, failed ${counts.failed}`,
    );
  }
  const failures = new Map<string, number>();
  for (const record of load.log.records.filter((entry) => entry.outcome === 'failed')) {
    const reason = `${record.kind} ${record.status}${record.code ? ` ${record.code}` : ''}`;
    failures.set(reason, (failures.get(reason) ?? 0) + 1);
  }
  if (failures.size > 0) {
    say(
      `  failed requests by answer: ${[...failures]
        .sort((a, b) => b[1] - a[1])
        .map(([reason, count]) => `${reason} ×${count}`)
        .join(', ')}`,
    );
  }
  say();
  say('kill windows (requests started from the kill until the next one; ok/failed per kind):');
  const windows = load.log.windows(
    steps.map((step) => step.event),
    loadEndedAt,
  );
  windows.forEach((window, index) => {
    const step = steps[index];
    const perKind = requestKinds
      .filter((kind) => Object.values(window.byKind[kind]).some((count) => count > 0))
      .map((kind) => `${kind} ${window.byKind[kind].ok}/${window.byKind[kind].failed}`)
      .join(', ');
    say(`  ${window.event.name.padEnd(30)} window ${seconds(window.endsAt - window.event.at)}: ${perKind}`);
    say(
      `  ${''.padEnd(30)} process back after ${seconds(step.backAfterMs)}, first OK create after ${seconds(step.recoveredAfterMs)}, ` +
        `first OK after: ${
          requestKinds
            .filter((kind) => window.firstOkAfterMs[kind] !== undefined)
            .map((kind) => `${kind} ${seconds(window.firstOkAfterMs[kind])}`)
            .join(', ') || 'none'
        }` +
        `; last failure ${window.lastFailureAfterMs === undefined ? 'none' : `after ${seconds(window.lastFailureAfterMs)}`}`,
    );
  });
}

function printStormFigures(storm: CreateStormResult, resolution: IdResolution): void {
  const answers = [...storm.answers]
    .sort((a, b) => b[1] - a[1])
    .map(([answer, count]) => `${answer} ×${count}`)
    .join(', ');
  const processing = storm.handedOut.filter((id) => id.answeredWith !== '201' && id.answeredWith !== 'OK');
  say(`create storm: ${storm.creates} creates (${answers}); ${storm.kills.length} kills`);
  say(
    `  ids handed out ${storm.handedOut.length} (${processing.length} of them 202 / BOOKING_PROCESSING); ` +
      `resolved ${resolution.bookings} to a booking, ${[...resolution.reasons.values()].reduce((sum, count) => sum + count, 0)} to a reason` +
      `${resolution.reasons.size > 0 ? ` (${[...resolution.reasons].map(([code, count]) => `${code} ×${count}`).join(', ')})` : ''}; ` +
      `404s ${resolution.notFound.length}; unresolved ${resolution.unresolved.length}`,
  );
  for (const bookingId of [...resolution.notFound, ...resolution.unresolved].slice(0, 10)) {
    say(`  broken promise: ${bookingId}`);
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      customers: { type: 'string' },
      rate: { type: 'string' },
      spacing: { type: 'string', default: '20' },
      'recovery-timeout': { type: 'string', default: '180' },
      'settle-timeout': { type: 'string', default: '180' },
      storm: { type: 'string', default: '40' },
      'storm-kill-every': { type: 'string', default: '5' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    say(usage);
    return 0;
  }
  const options = {
    ...defaultLoadOptions,
    ...(values.customers === undefined ? {} : { customers: Number(values.customers) }),
    ...(values.rate === undefined ? {} : { requestsPerSecond: Number(values.rate) }),
  };
  const spacingMs = Number(values.spacing) * 1000;
  const recoveryTimeoutMs = Number(values['recovery-timeout']) * 1000;
  const settleTimeoutMs = Number(values['settle-timeout']) * 1000;
  const stormMs = Number(values.storm) * 1000;
  const stormKillEveryMs = Number(values['storm-kill-every']) * 1000;
  for (const [name, value] of Object.entries({
    ...options,
    spacingMs,
    recoveryTimeoutMs,
    settleTimeoutMs,
    stormMs,
    stormKillEveryMs,
  })) {
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(`--${name} must be a positive number\n${usage}`);
  }

  const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-run-'));
  // PostgreSQL runs as its own account when started by root: it must reach its folder.
  fs.chmodSync(dataDirectory, 0o755);
  const startedAt = Date.now();
  const gaveUp: string[] = [];
  say(`chaos run: starting the cluster stack in ${dataDirectory}`);
  const stack = await startClusterStack({
    settings: { dataDirectory },
    // Tokens outlive the run, so a re-login is never what a kill window measures. Creates answer within two
    // seconds, so that with the bookings worker killed every few seconds most of the storm's are answered 202.
    environment: {
      IDP_ACCESS_TOKEN_TTL_SECONDS: '3600',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      BOOKING_CREATE_ANSWER_TIMEOUT_MS: '2000',
    },
    onGiveUp: (name) => gaveUp.push(name),
  });
  const database = createDatabase(stack.databaseUrl, { poolSize: 4, applicationName: 'chaos-run' });
  const connection = await Connection.connect(temporalConnectionOptions(stack.config.temporal));
  const temporal = new Client({
    connection,
    namespace: stack.namespace,
    dataConverter: createBookingDataConverter(stack.config),
  });
  const fronts: { rest: Front[]; grpc: Front[] } = { rest: [], grpc: [] };
  let passed = false;
  try {
    say(`cluster stack ready in ${seconds(Date.now() - startedAt)}: ${stack.processNames().join(', ')}`);
    const cipher = createFieldCipherFromConfig(stack.config);
    const inventory = await seedInventory(database, cipher, 120);
    const certificates = stack.grpcCertificates;
    if (certificates === undefined) throw new Error('the cluster stack made no gRPC client certificate');
    fronts.rest = stack.restUrls.map((url, index) => restFront(`rest api-${index + 1}`, url));
    fronts.grpc = stack.grpcAddresses.map((address, index) =>
      grpcFront(`grpc api-${index + 1}`, address, {
        certificateAuthority: certificates.certificateAuthority,
        certificate: certificates.client.certificate,
        privateKey: certificates.client.privateKey,
        serverName: 'localhost',
      }),
    );
    const customers = await signInCustomers(stack.restUrls[0], 40);
    const seats = new SeatPool(inventory.tripIds, freeSeatNumbers, 12);
    const load = new BookingLoad(fronts, customers, seats, reSignInWith(stack.restUrls), options);
    say(
      `load: ${options.customers} customers of ${customers.length} accounts, at most ${options.requestsPerSecond} requests/s, ${Math.round(options.grpcShare * 100)} % of bookings over gRPC`,
    );

    const loadStartedAt = Date.now();
    load.start();
    await sleep(spacingMs);
    const steps: StepResult[] = [];
    for (const step of chaosSteps) {
      say(
        `  ${seconds(Date.now() - loadStartedAt).padStart(8)}  ${step === 'temporal tier restart' ? 'restarting the Temporal tier' : `SIGKILL ${step}`}`,
      );
      steps.push(await runStep(stack, step, load.log, spacingMs, recoveryTimeoutMs));
    }
    say(
      `  ${seconds(Date.now() - loadStartedAt).padStart(8)}  stopping the load (stories in flight finish their current request)`,
    );
    await load.stop();
    const loadEndedAt = Date.now();

    // The storm's accounts are not the load's, whose unpaid holds would meet their cap.
    const stormCustomers = await signInCustomers(stack.restUrls[1], 60, customers.length + 1);
    say(
      `create storm: ${seconds(stormMs)} of creates from ${stormCustomers.length} customers, SIGKILL every ${seconds(stormKillEveryMs)} of ${stormVictims.map((group) => group.join(' and ')).join(', ')} in turn, the bookings workers frozen (SIGSTOP) for 60 % of each period`,
    );
    const storm = await runCreateStorm(stack, {
      fronts,
      customers: stormCustomers,
      seats,
      clients: 16,
      durationMs: stormMs,
      killEveryMs: stormKillEveryMs,
      victims: stormVictims,
      frozen: bookingsWorkers,
      frozenShare: 0.6,
      grpcShare: options.grpcShare,
    });
    const everyoneBack = await waitUntil(
      () => stormVictims.flat().every((name) => stack.pid(name) !== undefined),
      recoveryTimeoutMs,
    );
    if (!everyoneBack) say('  not every killed process came back');
    const settle = await waitForSettledWorkflows(temporal, undefined, settleTimeoutMs);
    say(
      `settle: ${settle.settled ? 'no booking workflow has an activity or a workflow task pending' : `${settle.busyWorkflows} workflows still have work in flight`} after ${seconds(settle.waitedMs)} (${settle.runningWorkflows} running)`,
    );
    const unresolved = await resolveCreates(database, load.unresolvedCreates);
    const idResolution = await resolveHandedOutIds(storm.handedOut, fronts.rest, settleTimeoutMs);

    say();
    printRequestFigures(load, steps, loadStartedAt, loadEndedAt);
    const tracked = [...load.bookings.values()];
    say();
    say(
      `bookings: created ${tracked.length} (answered OK), paid ${tracked.filter((booking) => booking.paid).length}, ` +
        `changed ${tracked.filter((booking) => booking.changed).length}, cancelled ${tracked.filter((booking) => booking.cancelled).length}; ` +
        `creates never answered OK nor refused ${load.unresolvedCreates.length}: ${unresolved.made.length} made a booking, ${unresolved.notMade} made nothing`,
    );

    // The inventory's pre-booked premium rows are rows without workflows, made by one account of its own.
    const inventoryOwners = await database('users')
      .where({ email_lookup: cipher.blindIndex(`bench:${benchInventoryEmail}`) })
      .pluck<string[]>('id');
    const report = await scanInvariants({
      database,
      temporal,
      cipher,
      acknowledged: load.acknowledgedRequests(),
      handedOutIds: storm.handedOut.map((id) => id.bookingId),
      ignoredCustomerIds: inventoryOwners,
    });
    say();
    printStormFigures(storm, idResolution);
    say();
    say('invariant scan:');
    for (const line of formatInvariantReport(report)) say(`  ${line}`);

    const unrecovered = steps
      .filter((step) => step.recoveredAfterMs === undefined)
      .map((step) => step.event.name);
    const problems = [
      ...(report.violationCount > 0 ? [`${report.violationCount} invariant violations`] : []),
      ...(unrecovered.length > 0
        ? [`no OK create within ${seconds(recoveryTimeoutMs)} after: ${unrecovered.join(', ')}`]
        : []),
      ...(gaveUp.length > 0 ? [`supervisors gave up on ${gaveUp.join(', ')}`] : []),
      ...(tracked.length === 0 ? ['the load made no booking at all'] : []),
      ...(idResolution.notFound.length > 0
        ? [`${idResolution.notFound.length} handed-out ids read 404`]
        : []),
      ...(idResolution.unresolved.length > 0
        ? [`${idResolution.unresolved.length} handed-out ids still unresolved`]
        : []),
    ];
    say();
    say(
      `chaos run ${problems.length === 0 ? 'passed' : `FAILED: ${problems.join('; ')}`} in ${seconds(Date.now() - startedAt)}`,
    );
    passed = problems.length === 0;
    return passed ? 0 : 1;
  } finally {
    for (const front of [...fronts.rest, ...fronts.grpc]) front.close();
    await connection.close().catch(() => undefined);
    await database.destroy().catch(() => undefined);
    await stack.stop();
    if (passed && !values.keep) fs.rmSync(dataDirectory, { recursive: true, force: true });
    else say(`the stack's data and logs are kept in ${dataDirectory}`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `chaos run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
