// Determinism: every recorded history replays against today's workflow code, and a reordered patched branch is caught.
import { expect } from '@jest/globals';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import * as patchConstants from '../../../src/workflows/patches';
import { tripCancellationWorkflowType } from '../../../src/workflows/trip-cancellation-shared';
import { partnerWebhookWorkflowType } from '../../../src/workflows/partner-webhooks-shared';
import { bundleSagaWorkflows } from '../../support/saga';
import {
  dataConverter,
  factsOf,
  isReleaseFolder,
  lifecycleTableRows,
  patchIdsInWorkflowCode,
  readReleases,
  rowChecks,
  withDecodedPayloads,
  type HistoryFacts,
  type HistoryJson,
  type RecordedHistory,
} from './recorded-histories';

/** Bundling twice with webpack on two shared cores takes a while; replaying itself is fast. */
jest.setTimeout(240_000);

/**
 * test/histories/<release>/: one folder per release, recorded by `npm run histories:record` when that release was
 * prepared and kept unchanged afterwards (docs/design.md, "Versioning the workflow"). Bookings and trip
 * cancellations of every released shape may still be open, so every folder must replay; the folder of the version
 * in package.json must cover every lifecycle row and every patch marker.
 */
const repositoryRoot = path.resolve(__dirname, '../../..');
const { version: currentRelease } = JSON.parse(
  readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8'),
) as { version: string };
const releases = readReleases();
const recorded = [...releases.values()].flatMap((release) => release.entries);
const current = releases.get(currentRelease)?.entries ?? [];

/** With payloads readable, by `<release>/<name>`. */
const facts = new Map<string, HistoryFacts>();
let currentBundle: WorkflowBundleWithSourceMap;
let currentOutcomes: Map<string, Error | undefined>;

/** Replays every recorded history against `bundle`; the replay error of each, by history name. */
async function replayAll(bundle: WorkflowBundleWithSourceMap): Promise<Map<string, Error | undefined>> {
  const outcomes = new Map<string, Error | undefined>();
  const histories = recorded.map((entry) => ({
    workflowId: entry.name,
    history: historyFromJSON(entry.history),
  }));
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: bundle, replayName: 'history-replay', dataConverter },
    histories,
  )) {
    outcomes.set(result.workflowId, result.error);
  }
  return outcomes;
}

beforeAll(async () => {
  // The edited bundle fails on purpose: core's warnings about each failed workflow task would only be noise.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
  for (const entry of recorded) {
    facts.set(entry.name, factsOf((await withDecodedPayloads(entry.history)) as HistoryJson));
  }
  currentBundle = await bundleSagaWorkflows();
  currentOutcomes = await replayAll(currentBundle);
});

function factsFor(entry: RecordedHistory): HistoryFacts {
  const found = facts.get(entry.name);
  if (found === undefined) throw new Error(`no facts for ${entry.name}`);
  return found;
}

test.each([...releases].filter(([name]) => isReleaseFolder(name)))(
  'test/histories/%s/index.json lists every history of its folder',
  (_, release) => {
    expect(release.hasManifest).toBe(true);
    expect(release.entries.map((entry) => entry.file).sort()).toEqual(release.files);
  },
);

describe('every recorded history replays against the current workflow code', () => {
  test.each(recorded.map((entry) => [`${entry.name}.json`, entry] as const))('%s', (_, entry) => {
    const shown = factsFor(entry);
    expect({ workflowType: shown.workflowType, replay: currentOutcomes.get(entry.name) }).toEqual({
      workflowType: entry.workflowType,
      replay: undefined,
    });
    // What the manifest says the history covers is what the history shows.
    if (entry.listed) expect(shown.patches).toEqual([...entry.patches].sort());
    for (const row of entry.rows) expect([row, rowChecks[row]?.(shown)]).toEqual([row, true]);
    expect(shown.closedAs).toMatch(/COMPLETED|CANCELED|CONTINUED_AS_NEW/);
  });
});

describe(`the histories of release ${currentRelease} cover the workflows`, () => {
  test('every row of the lifecycle table in docs/design.md', () => {
    const rows = lifecycleTableRows();
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.filter((row) => rowChecks[row] === undefined)).toEqual([]);
    const covered = new Set(current.flatMap((entry) => entry.rows));
    expect(rows.filter((row) => !covered.has(row))).toEqual([]);
  });

  test('every patch marker of src/workflows, each on its new branch', () => {
    const patchIds = patchIdsInWorkflowCode(patchConstants);
    expect(patchIds).toEqual(expect.arrayContaining([...patchConstants.bookingPatches]));
    const covered = new Set(current.flatMap((entry) => entry.patches));
    expect(patchIds.filter((id) => !covered.has(id))).toEqual([]);
  });

  test('the partner webhook delivery workflow: in order, retried, 410 Gone, schedule run out', () => {
    const runs = current.filter((entry) => entry.workflowType === partnerWebhookWorkflowType);
    expect(runs.map((entry) => entry.file).sort()).toEqual([
      'webhook-delivered-in-order.json',
      'webhook-gone-endpoint-disabled.json',
      'webhook-retried-then-delivered.json',
      'webhook-schedule-exhausted-endpoint-disabled.json',
    ]);
    for (const run of runs) expect(factsFor(run).closedAs).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
  });

  test('the trip cancellation workflow, across continue-as-new', () => {
    const runs = current.filter((entry) => entry.workflowType === tripCancellationWorkflowType);
    expect(runs.map((entry) => factsFor(entry).closedAs)).toEqual(
      expect.arrayContaining([
        'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
        'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED',
      ]),
    );
  });
});

/**
 * The deliberate edit, inside the `boarding-no-shows` branch: the no-show step's two activity calls, the refund
 * (RefundPayment) and the notification (SendEmailNotification), trade places around the publish.
 */
const editedFile = 'booking-day-of-travel.ts';
const noShowSteps = {
  refund: '  await saga.refund(refund);\n',
  publish:
    "  await saga.publish({ status: saga.next('BOARDING_CLOSED'), noShowsRecordedAt: toTimestamp(now()) });\n",
  notify:
    '  if (noShows.length > 0) await saga.steps.notifyNoShow(saga.booking, seatNumberList(noShows), refund);\n',
};

/** A copy of src/workflows with the edit, beside the real src/domain, src/activities and node_modules. */
function editedWorkflowsCopy(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'replay-edit-'));
  cpSync(path.join(repositoryRoot, 'src/workflows'), path.join(root, 'src/workflows'), { recursive: true });
  for (const linked of ['src/domain', 'src/activities', 'node_modules']) {
    symlinkSync(path.join(repositoryRoot, linked), path.join(root, linked));
  }
  const file = path.join(root, 'src/workflows', editedFile);
  const source = readFileSync(file, 'utf8');
  const { refund, publish, notify } = noShowSteps;
  if (!source.includes(refund + publish + notify)) {
    throw new Error(`the edit no longer applies to src/workflows/${editedFile}: update noShowSteps`);
  }
  writeFileSync(file, source.replace(refund + publish + notify, notify + publish + refund));
  return root;
}

describe('an incompatible edit is caught', () => {
  let copy: string | undefined;
  afterAll(() => {
    if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
  });

  test('swapping the no-show refund and notification breaks replay of exactly the histories that took that branch', async () => {
    copy = editedWorkflowsCopy();
    const workflows = path.join(copy, 'src/workflows');
    const editedBundle = await bundleWorkflowCode({
      workflowsPath: path.join(workflows, 'index.ts'),
      workflowInterceptorModules: [path.join(workflows, 'tracing/interceptors.ts')],
      preloadModules: [path.join(workflows, 'tracing/shared-async-context.ts')],
      logger: new DefaultLogger('ERROR'),
    });
    const tookBranch = recorded
      .filter((entry) => factsFor(entry).notifications.includes('booking-no-show'))
      .map((entry) => entry.name);
    expect(tookBranch.length).toBeGreaterThan(0);

    const outcomes = await replayAll(editedBundle);

    for (const [name, error] of outcomes) {
      if (tookBranch.includes(name)) {
        expect([name, error]).toEqual([name, expect.any(DeterminismViolationError)]);
      } else {
        expect([name, error]).toEqual([name, undefined]);
      }
    }
    for (const name of tookBranch) process.stdout.write(`${name}: ${outcomes.get(name)?.message ?? ''}\n`);
  });
});
