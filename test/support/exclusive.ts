// Serializes, across jest workers, the suites that share something global to a run (the standard task queues).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './outcomes';

function holderGone(lock: string): boolean {
  try {
    const pid = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // No pid file yet: its holder is between making the folder and writing it.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Waits until no other suite of this run (the same Temporal server) holds `name`, then holds it until the returned
 * function is called. A holder that died without releasing it is noticed by its process id.
 */
export async function holdExclusive(name: string, timeoutMs = 600_000): Promise<() => void> {
  const key = `${name}-${process.env.TEMPORAL_ADDRESS ?? 'no-server'}`.replace(/[^A-Za-z0-9.-]/g, '_');
  const lock = path.join(os.tmpdir(), `bookings-test-lock-${key}`);
  // Taking the lock is the probe: undefined while another live suite holds it.
  const tryHold = (): (() => void) | undefined => {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      return () => fs.rmSync(lock, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (holderGone(lock)) fs.rmSync(lock, { recursive: true, force: true });
    return undefined;
  };
  const release = await eventually(
    () => Promise.resolve(tryHold()),
    (held) => held !== undefined,
    { timeoutMs, intervalMs: 250 },
  );
  return release!;
}
