// The embedded stack's supervisor, driving real child processes (a shell script standing in for the worker or API).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServiceSupervisor, type RestartPolicy } from '../../../dev/stack/supervisor';

const fakeService = path.resolve(__dirname, '../../support/fake-service.sh');

const quickPolicy: RestartPolicy = {
  initialDelayMs: 10,
  maximumDelayMs: 25,
  stableAfterMs: 60_000,
  maximumFastFailures: 4,
};

let folder: string;
const supervisors: ServiceSupervisor[] = [];
// Captured before any test fakes the timers: polling for a real child process needs real time to pass.
const realSetTimeout = setTimeout;

beforeEach(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-test-'));
});

afterEach(async () => {
  // Real timers first: a stop's grace period must be able to end in a SIGKILL.
  jest.useRealTimers();
  jest.restoreAllMocks();
  await Promise.all(supervisors.splice(0).map((supervisor) => supervisor.stop(2000)));
  fs.rmSync(folder, { recursive: true, force: true });
});

/** Polls until `condition` holds; bounded, so a supervisor that never gets there fails the test instead of hanging. */
async function waitFor(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => realSetTimeout(resolve, 10));
  }
}

/**
 * Fakes the supervisor's restart timer (and nothing the child processes need), so a test can run the clock past
 * any restart delay at once and see that no restart was left scheduled.
 */
function fakeRestartTimer(): void {
  jest.useFakeTimers({
    doNotFake: [
      'Date',
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
    ],
  });
}

/** From now on the supervisor's clock reads `aheadMs` later than the real one. */
function clockAhead(aheadMs: number): void {
  const realNow = Date.now.bind(Date);
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + aheadMs);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function supervise(plan: string, policy: RestartPolicy, command = '/bin/sh') {
  const events = path.join(folder, 'events');
  const lines: string[] = [];
  const reasons: string[] = [];
  const supervisor = new ServiceSupervisor({
    name: 'fake',
    command,
    args: command === '/bin/sh' ? [fakeService] : [],
    environment: { ...process.env, FAKE_SERVICE_EVENTS: events, FAKE_SERVICE_PLAN: plan },
    stdio: ['ignore', 'ignore', 'inherit'],
    policy,
    log: {
      info: (message) => lines.push(`info: ${message}`),
      error: (message) => lines.push(`error: ${message}`),
    },
    onGiveUp: (reason) => reasons.push(reason),
  });
  supervisors.push(supervisor);
  // Only lines the script has finished writing: the file exists, empty, a moment before its first line does.
  const startedPids = () =>
    fs.existsSync(events)
      ? fs
          .readFileSync(events, 'utf8')
          .split('\n')
          .slice(0, -1)
          .map((line) => Number(line.split(' ')[1]))
      : [];
  const restartLines = () => lines.filter((line) => line.includes('restarting in'));
  return { supervisor, lines, reasons, startedPids, restartLines };
}

describe('service supervisor', () => {
  it('restarts a service killed with SIGKILL and says so in the log', async () => {
    const { supervisor, lines, startedPids } = supervise('run', quickPolicy);
    supervisor.start();
    await waitFor('the first start', () => startedPids().length === 1);
    const [first] = startedPids();
    process.kill(first, 'SIGKILL');

    await waitFor('the restart', () => startedPids().length === 2);
    const second = startedPids()[1];
    expect(second).not.toBe(first);
    expect(isRunning(second)).toBe(true);
    expect(lines).toEqual([
      'error: fake exited (signal SIGKILL); restarting in 10 ms (attempt 1)',
      `info: fake restarted (pid ${second})`,
    ]);
  });

  it('doubles the wait after each fast failure up to the maximum, then gives up and says why', async () => {
    const { supervisor, reasons, startedPids, restartLines, lines } = supervise('crash', quickPolicy);
    supervisor.start();
    await waitFor('giving up', () => supervisor.hasGivenUp);

    expect(restartLines()).toEqual([
      'error: fake exited with code 3; restarting in 10 ms (attempt 1)',
      'error: fake exited with code 3; restarting in 20 ms (attempt 2)',
      'error: fake exited with code 3; restarting in 25 ms (attempt 3)',
    ]);
    const reason =
      'fake exited with code 3: it failed 4 times in a row, each within 60 s of starting; giving up';
    expect(reasons).toEqual([reason]);
    expect(lines[lines.length - 1]).toBe(`error: ${reason}`);
    expect(startedPids()).toHaveLength(4);
    expect(supervisor.startCount).toBe(4);
  });

  it('starts the backoff over after a run that outlasted the stable period', async () => {
    const policy = { ...quickPolicy, maximumDelayMs: 1000, stableAfterMs: 2000, maximumFastFailures: 10 };
    const { supervisor, startedPids, restartLines } = supervise('crash,crash,run', policy);
    supervisor.start();
    await waitFor('the third start', () => startedPids().length === 3);
    // Its start was stamped before its pid was recorded: from now on, that run has outlasted the stable period.
    clockAhead(policy.stableAfterMs + 100);
    process.kill(startedPids()[2], 'SIGKILL');
    await waitFor('the fourth start', () => startedPids().length === 4);

    expect(restartLines()).toEqual([
      'error: fake exited with code 3; restarting in 10 ms (attempt 1)',
      'error: fake exited with code 3; restarting in 20 ms (attempt 2)',
      'error: fake exited (signal SIGKILL); restarting in 10 ms (attempt 1)',
    ]);
  });

  it('stops the service and never restarts it while stopping', async () => {
    fakeRestartTimer();
    const { supervisor, startedPids, restartLines, reasons } = supervise('run', quickPolicy);
    supervisor.start();
    await waitFor('the first start', () => startedPids().length === 1);
    const [pid] = startedPids();

    await supervisor.stop(2000);
    expect(isRunning(pid)).toBe(false);
    // Many restart delays later, still nothing was started again.
    jest.advanceTimersByTime(20 * quickPolicy.initialDelayMs);
    expect(supervisor.startCount).toBe(1);
    expect(startedPids()).toEqual([pid]);
    expect(restartLines()).toEqual([]);
    expect(reasons).toEqual([]);
  });

  it('cancels a restart that was waiting when the stop came', async () => {
    const policy = { ...quickPolicy, initialDelayMs: 200 };
    fakeRestartTimer();
    const { supervisor, startedPids, restartLines } = supervise('crash', policy);
    supervisor.start();
    await waitFor('a restart to be scheduled', () => restartLines().length === 1);

    await supervisor.stop(2000);
    jest.advanceTimersByTime(3 * policy.initialDelayMs);
    expect(startedPids()).toHaveLength(1);
    expect(supervisor.startCount).toBe(1);
  });

  it('signals the running process as a failure would end it, and restarts it', async () => {
    const { supervisor, startedPids, restartLines } = supervise('run', quickPolicy);
    supervisor.start();
    await waitFor('the first start', () => startedPids().length === 1);
    expect(supervisor.pid).toBe(startedPids()[0]);

    expect(supervisor.signal('SIGKILL')).toBe(true);
    await waitFor('the restart', () => startedPids().length === 2);
    expect(restartLines()).toEqual(['error: fake exited (signal SIGKILL); restarting in 10 ms (attempt 1)']);
    await waitFor('the new pid', () => supervisor.pid === startedPids()[1]);
  });

  it('leaves the process running but restarts nothing after restarts are held', async () => {
    fakeRestartTimer();
    const { supervisor, startedPids, restartLines } = supervise('run', quickPolicy);
    supervisor.start();
    await waitFor('the first start', () => startedPids().length === 1);
    const [pid] = startedPids();

    supervisor.holdRestarts();
    expect(isRunning(pid)).toBe(true);
    // What a Ctrl-C to the whole process group does while the stack stops its services one tier at a time.
    process.kill(pid, 'SIGINT');
    await waitFor('the exit', () => !isRunning(pid));
    await waitFor('the supervisor to see the exit', () => supervisor.pid === undefined);
    jest.advanceTimersByTime(20 * quickPolicy.initialDelayMs);
    expect(supervisor.startCount).toBe(1);
    expect(startedPids()).toEqual([pid]);
    expect(restartLines()).toEqual([]);
    expect(supervisor.signal('SIGKILL')).toBe(false);
  });

  it('gives up at once, in one line naming the cause, when the command cannot be run', async () => {
    const notExecutable = path.join(folder, 'not-executable');
    fs.writeFileSync(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    const { supervisor, lines, reasons } = supervise('run', quickPolicy, notExecutable);
    supervisor.start();
    await waitFor('giving up', () => supervisor.hasGivenUp);

    const reason = `could not start fake: spawn ${notExecutable} EACCES`;
    expect(reasons).toEqual([reason]);
    expect(lines).toEqual([`error: ${reason}`]);
    expect(supervisor.startCount).toBe(1);
  });
});
