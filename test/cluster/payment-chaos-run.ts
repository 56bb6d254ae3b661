// The payment chaos run of `npm run test:cluster`: bookings paid through localstripe while workers and the webhook's
// API are killed, then the payment scan; prints the figures, exits non-zero on any violation.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import Stripe from 'stripe';
import type { PaymentReconciliationResult } from '../../src/activities/interface';
import { createDatabase } from '../../src/db/connection';
import { projectRoot } from '../../src/project-root';
import { createFieldCipherFromConfig } from '../../src/security/field-cipher-from-config';
import { createBookingDataConverter } from '../../src/security/temporal-payload-codec';
import { temporalConnectionOptions } from '../../src/security/temporal-connection';
import { paymentReconciliationScheduleId } from '../../src/worker/payment-reconciliation-schedule';
import { paymentReconciliationWorkflowType } from '../../src/workflows/payment-reconciliation-shared';
import { startClusterStack, type ClusterStack } from '../../dev/stack/cluster';
import { benchInventoryEmail, seedInventory } from '../../bench/lib/inventory';
import { localstripeKey, startLocalstripe } from '../support/localstripe';
import { scanPayments } from './invariants/payment-scan';
import { formatInvariantReport, scanInvariants } from './invariants/scan';
import { waitForSettledWorkflows } from './invariants/scope';
import { SeatPool } from './load/booking-load';
import { signInCustomers } from './load/customers';
import { PaymentLoad, paymentScenarios } from './load/payment-load';
import { startWebhookRelay } from './load/webhook-relay';
import type { Knex } from 'knex';
import { sleep, waitUntil } from './support/waiting';

const usage = `tsx test/cluster/payment-chaos-run.ts [options]
  --customers <n>          customers paying at once (8)
  --rate <n>               requests per second at most (8)
  --duration <s>           how long new bookings are started (100); late ones then wait for their hold's end
  --kill-every <s>         a SIGKILL this often, in turn: api-1 (which receives the webhooks), the payments
                           worker, both bookings workers (15; each is then killed every 45 s, past the
                           supervisor's 30 s after which a failure no longer counts towards giving up)
  --hold <s>               BOOKING_HOLD_SECONDS (60)
  --settle-timeout <s>     how long in-flight work may take to finish after the load (180)
  --passes-timeout <s>     how long to wait for two reconciliation passes after the holds ended (330)
  --keep                   keep the stack's data folder (logs) even when the run passes
Ports: the cluster stack's CLUSTER_* variables (README); localstripe and the webhook relay take free ones.`;

const victims: string[][] = [
  ['api-1'],
  ['worker-booking-payments'],
  ['worker-bookings-1', 'worker-bookings-2'],
];

/** The simulator's ledger is left empty by a run on Stripe: the payment scan answers those questions instead. */
const simulatorLedgerInvariants = new Set(['no-double-charge', 'ledger-covers-booking', 'no-orphan-charge']);

/** Rows 3 to 10 of the bench bus are free standard seats on every trip of the bench inventory. */
const freeSeatNumbers = Array.from({ length: 8 }, (_, row) =>
  ['A', 'B', 'C', 'D', 'E'].map((letter) => `${row + 3}${letter}`),
).flat();

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function tally<Item>(items: readonly Item[], keyOf: (item: Item) => string): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
  return (
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([key, count]) => `${key} ×${count}`)
      .join(', ') || 'none'
  );
}

interface ReconciliationPass {
  startedAt: number;
  status: string;
  result?: PaymentReconciliationResult;
}

async function reconciliationPasses(temporal: Client): Promise<ReconciliationPass[]> {
  const passes: ReconciliationPass[] = [];
  for await (const execution of temporal.workflow.list({
    query: `WorkflowType = '${paymentReconciliationWorkflowType}'`,
  })) {
    const pass: ReconciliationPass = {
      startedAt: execution.startTime.getTime(),
      status: execution.status.name,
    };
    if (execution.status.name === 'COMPLETED') {
      pass.result = (await temporal.workflow
        .getHandle(execution.workflowId, execution.runId)
        .result()) as PaymentReconciliationResult;
    }
    passes.push(pass);
  }
  return passes.sort((a, b) => a.startedAt - b.startedAt);
}

async function registerWebhook(localstripeUrl: string, url: string, secret: string): Promise<void> {
  const response = await fetch(`${localstripeUrl}/_config/webhooks/payment-chaos`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ url, secret }),
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`localstripe refused the webhook endpoint: ${response.status}`);
}

async function paymentEventFigures(database: Knex): Promise<string[]> {
  const { rows } = await database.raw<{
    rows: { source: string; kind: string; outcome: string | null; count: number }[];
  }>(
    `SELECT source, kind, outcome, count(*)::int AS count FROM payment_events
     GROUP BY source, kind, outcome ORDER BY source, kind, outcome`,
  );
  return rows.map((row) => `${row.source} ${row.kind} ${row.outcome ?? 'unapplied'}: ${row.count}`);
}

/**
 * The late-money incidents ReportPaymentIncident logged, once per payment (an activity retried after a kill logs
 * again), with what it came from: a cancel, or the hold's end with the seats kept or gone.
 */
function lateMoney(logDirectory: string): string[] {
  const byPayment = new Map<string, string>();
  const lines = fs
    .readdirSync(logDirectory)
    .filter((name) => name.startsWith('worker-'))
    .flatMap((name) => fs.readFileSync(path.join(logDirectory, name), 'utf8').split('\n'))
    .filter((line) => line.includes('payment incident'));
  for (const line of lines) {
    const kind = /"kind":"(late_payment_(?:confirmed|refunded))"/.exec(line)?.[1];
    if (kind === undefined) continue;
    const reference = /"reference":"([^"]*)"/.exec(line)?.[1] ?? line;
    const reason = /"reason":"([^"]*)"/.exec(line)?.[1] ?? '';
    const origin =
      kind === 'late_payment_confirmed'
        ? "confirmed at the hold's end, the seats kept"
        : reason.includes('cancelled')
          ? 'refunded: paid as the booking was cancelled'
          : `refunded at the hold's end: ${reason}`;
    byPayment.set(reference, origin);
  }
  return [...byPayment.values()];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      customers: { type: 'string', default: '8' },
      rate: { type: 'string', default: '8' },
      duration: { type: 'string', default: '100' },
      'kill-every': { type: 'string', default: '15' },
      hold: { type: 'string', default: '60' },
      'settle-timeout': { type: 'string', default: '180' },
      'passes-timeout': { type: 'string', default: '330' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    say(usage);
    return 0;
  }
  const numbers = {
    customers: Number(values.customers),
    rate: Number(values.rate),
    durationMs: Number(values.duration) * 1000,
    killEveryMs: Number(values['kill-every']) * 1000,
    holdSeconds: Number(values.hold),
    settleTimeoutMs: Number(values['settle-timeout']) * 1000,
    passesTimeoutMs: Number(values['passes-timeout']) * 1000,
  };
  for (const [name, value] of Object.entries(numbers)) {
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(`--${name} must be a positive number\n${usage}`);
  }

  const startedAt = Date.now();
  const { ensureLocalstripe } = require(path.join(projectRoot, 'scripts', 'localstripe.cjs')) as {
    ensureLocalstripe: () => string;
  };
  const localstripe = await startLocalstripe(ensureLocalstripe());
  const webhookSecret = `whsec_${randomBytes(24).toString('base64').replace(/[+/=]/g, 'x')}`;
  const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'payment-chaos-run-'));
  // PostgreSQL runs as its own account when started by root: it must reach its folder.
  fs.chmodSync(dataDirectory, 0o755);
  const gaveUp: string[] = [];
  say(`payment chaos run: localstripe at ${localstripe.url}; starting the cluster stack in ${dataDirectory}`);
  let stack: ClusterStack;
  try {
    stack = await startClusterStack({
      settings: { dataDirectory },
      environment: {
        IDP_ACCESS_TOKEN_TTL_SECONDS: '3600',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
        PAYMENT_GATEWAY: 'stripe',
        STRIPE_API_URL: localstripe.url,
        STRIPE_SECRET_KEY: localstripeKey,
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        PAYMENT_RECONCILE_INTERVAL_MINUTES: '1',
        BOOKING_HOLD_SECONDS: String(numbers.holdSeconds),
      },
      onGiveUp: (name) => gaveUp.push(name),
    });
  } catch (error) {
    await localstripe.stop();
    throw error;
  }
  const relay = await startWebhookRelay(`${stack.restUrls[0]}/v1/payments/stripe/events`);
  const database = createDatabase(stack.databaseUrl, { poolSize: 4, applicationName: 'payment-chaos-run' });
  const connection = await Connection.connect(temporalConnectionOptions(stack.config.temporal));
  const temporal = new Client({
    connection,
    namespace: stack.namespace,
    dataConverter: createBookingDataConverter(stack.config),
  });
  const stripe = (() => {
    const { hostname, port } = new URL(localstripe.url);
    return new Stripe(localstripeKey, { host: hostname, port: Number(port), protocol: 'http' });
  })();
  let passed = false;
  try {
    say(`cluster stack ready in ${seconds(Date.now() - startedAt)}: ${stack.processNames().join(', ')}`);
    await registerWebhook(localstripe.url, relay.url, webhookSecret);
    const cipher = createFieldCipherFromConfig(stack.config);
    const inventory = await seedInventory(database, cipher, 120);
    const customers = await signInCustomers(stack.restUrls[0], 40);
    const seats = new SeatPool(inventory.tripIds, freeSeatNumbers, 12);
    const load = new PaymentLoad(stack.restUrls, localstripe.url, localstripeKey, customers, seats, {
      customers: numbers.customers,
      requestsPerSecond: numbers.rate,
    });
    say(
      `load: ${numbers.customers} customers at most ${numbers.rate} requests/s over both APIs for ${seconds(numbers.durationMs)}, hold ${numbers.holdSeconds} s, reconciliation every minute; localstripe's webhooks go to api-1 (through a relay that counts them)`,
    );
    say(
      `kills: SIGKILL every ${seconds(numbers.killEveryMs)} of ${victims.map((group) => group.join(' and ')).join(', ')} in turn`,
    );

    const loadStartedAt = Date.now();
    load.start();
    const kills: string[] = [];
    for (let index = 0; Date.now() + numbers.killEveryMs <= loadStartedAt + numbers.durationMs; index += 1) {
      await sleep(numbers.killEveryMs);
      const group = victims[index % victims.length];
      // The webhook's API dies just as a passed challenge's webhook is on its way, so that one is lost for sure.
      if (group.includes('api-1')) await load.nextPassedChallenge(5000);
      const running = group.filter((name) => stack.pid(name) !== undefined);
      for (const name of running) stack.kill(name, 'SIGKILL');
      kills.push(running.join('+'));
      say(
        `  ${seconds(Date.now() - loadStartedAt).padStart(8)}  SIGKILL ${running.join(' and ') || `(none of ${group.join(', ')} running)`}`,
      );
    }
    await sleep(Math.max(0, loadStartedAt + numbers.durationMs - Date.now()));
    say(
      `  ${seconds(Date.now() - loadStartedAt).padStart(8)}  no new bookings; stories in flight finish (late payments wait for their hold's end)`,
    );
    await load.stop();
    const loadEndedAt = Date.now();
    say(`  ${seconds(loadEndedAt - loadStartedAt).padStart(8)}  load stopped`);

    const everyoneBack = await waitUntil(
      () => victims.flat().every((name) => stack.pid(name) !== undefined),
      numbers.settleTimeoutMs,
    );
    if (!everyoneBack) say('  not every killed process came back');
    const lastHoldEnd = load.latestHoldEnd;
    say(
      `waiting for every hold to end (${seconds(Math.max(0, lastHoldEnd - Date.now()))}) and for in-flight work`,
    );
    await sleep(Math.max(0, lastHoldEnd + 5000 - Date.now()));
    const settled = await waitForSettledWorkflows(temporal, undefined, numbers.settleTimeoutMs);
    say(
      `settle: ${settled.settled ? 'nothing in flight' : `${settled.busyWorkflows} workflows still busy`} after ${seconds(settled.waitedMs)} (${settled.runningWorkflows} running)`,
    );
    const passesFrom = Date.now();
    say(
      'two reconciliation passes started after that: the schedule is triggered, as an operator would, not awaited',
    );
    let passes: ReconciliationPass[] = [];
    const passesDeadline = passesFrom + numbers.passesTimeoutMs;
    const schedule = temporal.schedule.getHandle(paymentReconciliationScheduleId);
    for (let wanted = 1; wanted <= 2; wanted += 1) {
      // A trigger while a pass runs is skipped (overlap SKIP): each waits for the pass before it to end.
      let triggeredAt = 0;
      for (;;) {
        passes = await reconciliationPasses(temporal);
        const after = passes.filter((pass) => pass.startedAt >= passesFrom && pass.status === 'COMPLETED');
        if (after.length >= wanted || Date.now() > passesDeadline) break;
        if (Date.now() - triggeredAt > 15_000 && !passes.some((pass) => pass.status === 'RUNNING')) {
          await schedule.trigger();
          triggeredAt = Date.now();
        }
        await sleep(1000);
      }
    }
    const finalPasses = passes.filter((pass) => pass.startedAt >= passesFrom && pass.status === 'COMPLETED');
    const resettled = await waitForSettledWorkflows(temporal, undefined, numbers.settleTimeoutMs);

    say();
    say(
      `requests: ${[...load.counts]
        .sort()
        .map(([key, count]) => `${key} ×${count}`)
        .join(', ')}`,
    );
    say(`stories: ${load.stories.length} bookings (${tally(load.stories, (story) => story.scenario)})`);
    for (const scenario of paymentScenarios) {
      const of = load.stories.filter((story) => story.scenario === scenario);
      if (of.length === 0) continue;
      say(`  ${scenario.padEnd(24)} ${tally(of, (story) => story.steps.slice(1).join(' → ') || 'not paid')}`);
    }
    const authentications = load.stories.flatMap((story) => story.authentications);
    say(
      `authentications at localstripe: ${tally(authentications, (entry) => `${entry.success ? 'passed' : 'failed'} ${entry.status}`)}`,
    );
    const late = authentications.filter((entry) => entry.atHoldEndMs !== undefined);
    if (late.length > 0) {
      say(
        `  late ones, from the hold's end: ${tally(late, (entry) => `${(entry.atHoldEndMs ?? 0) < 0 ? 'before' : 'after'} → ${entry.status}`)}`,
      );
    }
    say(
      `kills: ${kills.length} (${tally(kills, (name) => name)}); supervisors gave up on: ${gaveUp.join(', ') || 'none'}`,
    );

    say();
    const lost = relay.deliveries.filter((delivery) => delivery.outcome !== 'delivered');
    say(
      `webhooks from localstripe: ${relay.deliveries.length} (${tally(relay.deliveries, (delivery) => `${delivery.type} ${delivery.outcome}`)})`,
    );
    say(`webhooks lost to kills (api-1 down or dying; localstripe never retries): ${lost.length}`);
    const allPasses = passes.filter((pass) => pass.result !== undefined);
    const mended = allPasses.flatMap((pass) => pass.result?.mended ?? []);
    say(
      `reconciliation: ${passes.length} passes (${tally(passes, (pass) => pass.status)}); mended ${mended.length} outcomes: ${tally(mended, (entry) => `${entry.kind} ${entry.outcome}`)}`,
    );
    const challengeIntents = new Set(load.stories.flatMap((story) => story.intentIds));
    const mendedIntents = new Set(mended.map((entry) => entry.intentId));
    say(
      `  the lost webhooks' outcomes: ${tally(lost, (delivery) =>
        mendedIntents.has(delivery.objectId)
          ? 'mended by the reconciliation'
          : challengeIntents.has(delivery.objectId ?? '')
            ? "found by the workflow's own look (the hold's end or a cancel asks the processor)"
            : "needed by no one (the payment's answer had it)",
      )}`,
    );
    say(
      `late money (payment incidents in the workers' logs, once per payment): ${tally(lateMoney(stack.logDirectory), (kind) => kind)}`,
    );
    say(
      `  passes after the holds ended: ${finalPasses.length} (mended ${finalPasses.flatMap((pass) => pass.result?.mended ?? []).length}); settle after them: ${resettled.settled ? 'nothing in flight' : `${resettled.busyWorkflows} busy`}`,
    );
    say(`payment_events: ${(await paymentEventFigures(database)).join('; ')}`);

    // The inventory's pre-booked premium rows are rows without workflows or payments, made by one account of its own.
    const inventoryOwners = await database('users')
      .where({ email_lookup: cipher.blindIndex(`bench:${benchInventoryEmail}`) })
      .pluck<string[]>('id');
    const paymentReport = await scanPayments({
      stripe,
      database,
      temporal,
      ignoredCustomerIds: inventoryOwners,
    });
    say();
    say(
      `payment scan: intents ${Object.entries(paymentReport.intentsByStatus)
        .map(([status, count]) => `${status} ${count}`)
        .join(', ')}; refunds ${paymentReport.refunds} (${paymentReport.refundedMinor} minor units)`,
    );
    for (const result of paymentReport.results) {
      say(
        `  ${result.violations.length === 0 ? 'ok  ' : 'FAIL'} ${result.name}: ${result.violations.length} (${result.description})`,
      );
      for (const violation of result.violations.slice(0, 20))
        say(`         ${violation.subject}: ${violation.detail}`);
    }

    const report = await scanInvariants({ database, temporal, cipher, ignoredCustomerIds: inventoryOwners });
    const kept = report.results.filter((result) => !simulatorLedgerInvariants.has(result.name));
    const generalViolations = kept.reduce((sum, result) => sum + result.violations.length, 0);
    say();
    say('invariant scan (the simulator-ledger invariants left out: the payment scan above stands for them):');
    for (const line of formatInvariantReport({ ...report, results: kept, violationCount: generalViolations }))
      say(`  ${line}`);

    const problems = [
      ...(paymentReport.violationCount > 0 ? [`${paymentReport.violationCount} payment violations`] : []),
      ...(generalViolations > 0 ? [`${generalViolations} invariant violations`] : []),
      ...(finalPasses.length < 2
        ? [`only ${finalPasses.length} reconciliation passes after the holds ended`]
        : []),
      ...(gaveUp.length > 0 ? [`supervisors gave up on ${gaveUp.join(', ')}`] : []),
      ...(load.stories.length === 0 ? ['the load made no booking at all'] : []),
    ];
    say();
    say(
      `payment chaos run ${problems.length === 0 ? 'passed' : `FAILED: ${problems.join('; ')}`} in ${seconds(Date.now() - startedAt)}`,
    );
    passed = problems.length === 0;
    return passed ? 0 : 1;
  } finally {
    await relay.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
    await database.destroy().catch(() => undefined);
    await stack.stop();
    await localstripe.stop();
    if (passed && !values.keep) fs.rmSync(dataDirectory, { recursive: true, force: true });
    else say(`the stack's data and logs are kept in ${dataDirectory}`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `payment chaos run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
