// Starts localstripe (scripts/localstripe.cjs installs it) on a loopback port of its own and waits until it answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { withFreePort } from './ports';

export interface RunningLocalstripe {
  /** `http://127.0.0.1:<port>`: STRIPE_API_URL for the adapter, the base of `/_config/…` for the tests. */
  url: string;
  /** Milliseconds from the spawn to its first answer. */
  startMs: number;
  stop(): Promise<void>;
}

const readyWithinMs = 30_000;
const pollEveryMs = 50;

/** Any `sk_test_` key passes localstripe's check; it stores nothing per key. */
export const localstripeKey = 'sk_test_localstripe';

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/v1/balance`, {
      headers: { authorization: `Bearer ${localstripeKey}` },
      signal: AbortSignal.timeout(1000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const killed = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killed);
}

/**
 * localstripe binds every interface (its bind address is not configurable), so it gets an ephemeral port nobody is
 * told about and only test data. `--from-scratch` keeps it from loading the state file an earlier run left in /tmp.
 */
async function startOn(binary: string, port: number): Promise<RunningLocalstripe> {
  const started = Date.now();
  const child = spawn(binary, ['--port', String(port), '--from-scratch'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let errorOutput = '';
  // A spawn that cannot start (no interpreter, no binary) is an answer to report, not a crash of the run.
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    errorOutput = (errorOutput + chunk.toString('utf8')).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = started + readyWithinMs;
  while (Date.now() < deadline) {
    if (spawnError !== undefined) {
      throw new Error(`localstripe could not start (${binary}): ${spawnError.message}`);
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`localstripe exited before answering: ${errorOutput.trim()}`);
    }
    if (await answers(url)) {
      return { url, startMs: Date.now() - started, stop: () => stopProcess(child) };
    }
    await new Promise((resolve) => setTimeout(resolve, pollEveryMs));
  }
  await stopProcess(child);
  throw new Error(`localstripe did not answer within ${readyWithinMs} ms: ${errorOutput.trim()}`);
}

export function startLocalstripe(binary: string): Promise<RunningLocalstripe> {
  return withFreePort((port) => startOn(binary, port));
}
