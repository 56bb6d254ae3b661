// Serializes, across jest workers, the suites that share something global to a run (the standard task queues).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      return () => fs.rmSync(lock, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (holderGone(lock)) {
      fs.rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${name}, held by another suite`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
