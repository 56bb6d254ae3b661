// Keeps one service of the embedded stack running: restarts it with backoff when it dies, gives up on a crash loop.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { describeExit, stopChild, stopWithParent } from './child-processes';

export interface RestartPolicy {
  /** Wait before the first restart; doubled on each further failure in a row. */
  initialDelayMs: number;
  maximumDelayMs: number;
  /** A run at least this long counts as healthy: its failure starts the backoff over. */
  stableAfterMs: number;
  /** This many failures in a row, each before `stableAfterMs`, is a crash loop: the supervisor gives up. */
  maximumFastFailures: number;
}

export const defaultRestartPolicy: RestartPolicy = {
  initialDelayMs: 1000,
  maximumDelayMs: 30_000,
  stableAfterMs: 30_000,
  maximumFastFailures: 5,
};

export interface SupervisorLog {
  info(message: string): void;
  error(message: string): void;
}

export interface SupervisedService {
  name: string;
  command: string;
  args: string[];
  environment: NodeJS.ProcessEnv;
  stdio?: StdioOptions;
  policy?: RestartPolicy;
  log: SupervisorLog;
  /** Called once when the supervisor stops trying (crash loop, or the command cannot be spawned at all). */
  onGiveUp(reason: string): void;
}

type State = 'created' | 'running' | 'waiting to restart' | 'stopped' | 'given up';

function formatDelay(milliseconds: number): string {
  return milliseconds < 1000 ? `${milliseconds} ms` : `${milliseconds / 1000} s`;
}

export class ServiceSupervisor {
  private readonly policy: RestartPolicy;
  private state: State = 'created';
  private child: ChildProcess | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private failuresInARow = 0;
  private starts = 0;
  private restartsHeld = false;

  constructor(private readonly service: SupervisedService) {
    this.policy = service.policy ?? defaultRestartPolicy;
  }

  /** How many times the service was spawned, the first start included. */
  get startCount(): number {
    return this.starts;
  }

  get hasGivenUp(): boolean {
    return this.state === 'given up';
  }

  /** The running process's id, or undefined while it waits to be restarted or after the stop. */
  get pid(): number | undefined {
    return this.state === 'running' ? this.child?.pid : undefined;
  }

  /**
   * Sends `signal` to the running process as if it had failed on its own: unless the supervisor is stopped, the
   * process's exit is handled like any other (restarted with backoff). False when no process runs.
   */
  signal(signal: NodeJS.Signals): boolean {
    if (this.state !== 'running' || !this.child) return false;
    return this.child.kill(signal);
  }

  start(): void {
    if (this.state !== 'created') throw new Error(`${this.service.name} was already started`);
    this.spawnService();
  }

  /**
   * No restart from now on, but the process is left running: a stack stopping in order calls this on every
   * service first, so those that a Ctrl-C (sent to the whole process group) ends are not brought back meanwhile.
   */
  holdRestarts(): void {
    if (this.state === 'waiting to restart' || this.state === 'created') this.state = 'stopped';
    clearTimeout(this.restartTimer);
    this.restartsHeld = true;
  }

  /** Stops the service for good: no restart happens after this, even for an exit already under way. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.state !== 'given up') this.state = 'stopped';
    clearTimeout(this.restartTimer);
    if (this.child) await stopChild(this.child, graceMs);
  }

  private spawnService(): void {
    const { name, command, args, environment, stdio } = this.service;
    this.state = 'running';
    this.starts += 1;
    const startedAt = Date.now();
    const child = spawn(command, args, {
      env: environment,
      stdio: stdio ?? ['ignore', 'inherit', 'inherit'],
    });
    this.child = child;
    stopWithParent(child);
    child.on('error', (error) => {
      // Spawning failed (missing or non-executable command): no restart would fare better.
      if (child.pid === undefined) this.giveUp(`could not start ${name}: ${error.message}`);
    });
    child.once('exit', (code, signal) => this.onExit(describeExit(code, signal), Date.now() - startedAt));
    if (this.starts > 1) this.service.log.info(`${name} restarted (pid ${child.pid})`);
  }

  private onExit(how: string, ranForMs: number): void {
    if (this.state !== 'running') return;
    if (this.restartsHeld) {
      this.state = 'stopped';
      return;
    }
    const { name, log } = this.service;
    this.failuresInARow = ranForMs >= this.policy.stableAfterMs ? 1 : this.failuresInARow + 1;
    if (this.failuresInARow >= this.policy.maximumFastFailures) {
      this.giveUp(
        `${name} ${how}: it failed ${this.failuresInARow} times in a row, each within ` +
          `${formatDelay(this.policy.stableAfterMs)} of starting; giving up`,
      );
      return;
    }
    const delay = Math.min(
      this.policy.initialDelayMs * 2 ** (this.failuresInARow - 1),
      this.policy.maximumDelayMs,
    );
    log.error(`${name} ${how}; restarting in ${formatDelay(delay)} (attempt ${this.failuresInARow})`);
    this.state = 'waiting to restart';
    this.restartTimer = setTimeout(() => {
      if (this.state === 'waiting to restart') this.spawnService();
    }, delay);
  }

  private giveUp(reason: string): void {
    if (this.state === 'stopped' || this.state === 'given up') return;
    this.state = 'given up';
    clearTimeout(this.restartTimer);
    this.service.log.error(reason);
    this.service.onGiveUp(reason);
  }
}
