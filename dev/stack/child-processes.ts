// Child-process plumbing shared by the stack's parts: stopping a child in order, and never leaving one behind.
import type { ChildProcess } from 'node:child_process';

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Signals the child when this process exits, however it exits (an error path calling process.exit included), so
 * no server of the stack outlives it.
 */
export function stopWithParent(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): ChildProcess {
  const signalChild = () => {
    if (!hasExited(child)) child.kill(signal);
  };
  process.once('exit', signalChild);
  // A child that never started emits 'error' and no 'exit'.
  const forget = () => process.off('exit', signalChild);
  child.once('exit', forget);
  child.once('error', () => {
    if (child.pid === undefined) forget();
  });
  return child;
}

/** Asks the child to stop with `signal`, and kills it when it is still there after `graceMs`. */
export function stopChild(
  child: ChildProcess,
  graceMs: number,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (child.pid === undefined || hasExited(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill(signal);
  });
}

/** "exited with code 1", "exited (signal SIGKILL)": how a child ended, for one log line. */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal === null ? `exited with code ${code}` : `exited (signal ${signal})`;
}
