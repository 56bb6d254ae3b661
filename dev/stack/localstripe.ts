// localstripe (a stateful fake of Stripe's API that scripts/localstripe.cjs installs): started, awaited, told where to post.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { projectRoot } from '../../src/project-root';

export interface RunningLocalstripe {
  /** `http://127.0.0.1:<port>`: STRIPE_API_URL for the adapter, the base of `/_config/…`. */
  url: string;
  /** Milliseconds from the spawn to its first answer. */
  startMs: number;
  stop(): Promise<void>;
}

const readyWithinMs = 30_000;
const pollEveryMs = 50;

/** Any `sk_test_` key passes localstripe's check; it stores nothing per key. */
export const localstripeKey = 'sk_test_localstripe';

/** The pinned localstripe's executable, installed into `.tools/` on first use. */
export function localstripeBinary(): string {
  const { ensureLocalstripe } = require(path.join(projectRoot, 'scripts', 'localstripe.cjs')) as {
    ensureLocalstripe: () => string;
  };
  return ensureLocalstripe();
}

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
 * Starts localstripe on `port` and waits until it answers. It binds every interface (its bind address cannot be
 * set), so whoever starts it gives it only test data and `sk_test_` keys. `--from-scratch` keeps it from loading the
 * state file (`/tmp/localstripe.pickle`, fixed by localstripe) another instance left.
 */
export async function startLocalstripe(options: {
  binary: string;
  port: number;
  /** Where its own output goes (its request log); dropped unless given. */
  logFile?: number;
}): Promise<RunningLocalstripe> {
  const started = Date.now();
  const child = spawn(options.binary, ['--port', String(options.port), '--from-scratch'], {
    stdio: ['ignore', options.logFile ?? 'ignore', options.logFile ?? 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let errorOutput = '';
  // A spawn that cannot start (no interpreter, no binary) is an answer to report, not a crash.
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    errorOutput = (errorOutput + chunk.toString('utf8')).slice(-4000);
  });
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = started + readyWithinMs;
  while (Date.now() < deadline) {
    if (spawnError !== undefined) {
      throw new Error(`localstripe could not start (${options.binary}): ${spawnError.message}`);
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

/**
 * Registers (or points elsewhere) localstripe's webhook endpoint `id`, as an operator registers one in Stripe's
 * dashboard: it posts every event, signed with `secret`, to every endpoint registered.
 */
export async function registerLocalstripeWebhook(
  localstripeUrl: string,
  endpoint: { id: string; url: string; secret: string },
): Promise<void> {
  const response = await fetch(`${localstripeUrl}/_config/webhooks/${encodeURIComponent(endpoint.id)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ url: endpoint.url, secret: endpoint.secret }),
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) {
    throw new Error(
      `localstripe refused the webhook ${endpoint.id}: ${response.status} ${await response.text()}`,
    );
  }
}

/**
 * What Stripe.js does once the customer passes (or fails) a 3-D Secure challenge, as localstripe takes it: the HTTP
 * status it answered, or the fetch's own error when it could not be reached in `timeoutMs`.
 */
export async function authenticateAtLocalstripe(
  url: string,
  challenge: { intentId: string; clientSecret: string; success: boolean },
  timeoutMs = 5000,
): Promise<number> {
  const response = await fetch(`${url}/v1/payment_intents/${challenge.intentId}/_authenticate`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${localstripeKey}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ client_secret: challenge.clientSecret, success: String(challenge.success) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return response.status;
}
