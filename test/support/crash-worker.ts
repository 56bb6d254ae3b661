// Starts test/support/crash-worker-main.ts as a child process: a worker the crash tests can lose like a real machine.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TaskQueueNames } from '../../src/domain/task-queues';

/** What the child prints once its workers poll. */
export const crashWorkerReadyLine = 'crash-worker ready';
export const workflowBundleFileName = 'workflows.js';

/** The child's inputs; DATABASE_URL and TEMPORAL_ADDRESS come from the test's own environment. */
export const crashWorkerVariables = {
  /** JSON of the test's TaskQueueNames: the child polls those queues only. */
  taskQueues: 'CRASH_WORKER_TASK_QUEUES',
  /** Directory holding the test's workflow bundle, so the child skips webpack. */
  bundleDirectory: 'CRASH_WORKER_BUNDLE_DIR',
  outboxDirectory: 'CRASH_WORKER_OUTBOX_DIR',
  /** When the child SIGKILLs itself (a CrashPoint). Read by crash-worker-main.ts only; production has no such switch. */
  killAt: 'CRASH_WORKER_KILL_AT',
} as const;

/**
 * Where the child dies. `after-charge`: the gateway has recorded an approved charge, ProcessPayment has not
 * returned. `after-first-reservation`: a new booking's row and holds are committed, the workflow task that held
 * them has not completed (so Temporal runs that task again). `never`: the child dies only when the test kills it.
 */
export const crashPoints = ['after-charge', 'after-first-reservation', 'never'] as const;
export type CrashPoint = (typeof crashPoints)[number];

const workerScript = path.join(__dirname, 'crash-worker-main.ts');
const readyTimeoutMs = 60_000;

export interface CrashWorkerOptions {
  taskQueueNames: TaskQueueNames;
  workflowBundle: WorkflowBundleWithSourceMap;
  outboxDirectory: string;
  killAt: CrashPoint;
  /** Configuration variables for the child besides the test's own environment. */
  environment?: Record<string, string>;
}

export interface CrashWorker {
  readonly pid: number;
  /** Settles when the child exits, with its exit code or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What the child wrote to stderr, for failure messages. */
  errorOutput: () => string;
  /** SIGKILLs the child if it still runs, and removes its bundle copy. */
  stop(): Promise<void>;
}

function waitForReadyLine(child: ChildProcess, exited: Promise<unknown>, errorOutput: () => string) {
  return new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error(`crash worker not ready in ${readyTimeoutMs} ms: ${errorOutput()}`)),
      readyTimeoutMs,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes(crashWorkerReadyLine)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`crash worker exited before it was ready: ${errorOutput()}`));
    });
  });
}

export async function startCrashWorker(options: CrashWorkerOptions): Promise<CrashWorker> {
  const bundleDirectory = mkdtempSync(path.join(os.tmpdir(), 'crash-worker-bundle-'));
  writeFileSync(path.join(bundleDirectory, workflowBundleFileName), options.workflowBundle.code);
  writeFileSync(
    path.join(bundleDirectory, `${workflowBundleFileName}.map`),
    options.workflowBundle.sourceMap,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', workerScript], {
    cwd: path.resolve(__dirname, '../..'),
    env: {
      ...process.env,
      ...options.environment,
      [crashWorkerVariables.taskQueues]: JSON.stringify(options.taskQueueNames),
      [crashWorkerVariables.bundleDirectory]: bundleDirectory,
      [crashWorkerVariables.outboxDirectory]: options.outboxDirectory,
      [crashWorkerVariables.killAt]: options.killAt,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errorOutput = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errorOutput += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const worker: CrashWorker = {
    pid: child.pid ?? -1,
    exited,
    errorOutput: () => errorOutput,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(bundleDirectory, { recursive: true, force: true });
    },
  };
  try {
    await waitForReadyLine(child, exited, worker.errorOutput);
  } catch (error) {
    await worker.stop();
    throw error;
  }
  return worker;
}
