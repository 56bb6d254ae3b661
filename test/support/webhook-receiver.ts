// A partner's receiver in Python (webhook-receiver.py) on the official standardwebhooks package, pinned in .tools/.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root';

export const standardWebhooksPythonPin = 'standardwebhooks==1.1.0';

/** What the receiver wrote for one request. */
export interface ReceivedWebhook {
  id: string | null;
  valid: boolean;
  type: string | null;
  error: string | null;
}

export interface PythonWebhookReceiver {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** The lines written so far, one per request, in order. */
  received(): ReceivedWebhook[];
  /** Waits until `count` requests have been recorded, for at most `timeoutMs`. */
  waitForReceived(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  stop(): Promise<void>;
}

/**
 * The Python of a virtual environment holding the pinned package, made on first use. The real path of .tools, so
 * checkouts sharing one (a symlink) share the environment; beside the pin, as its scripts name their interpreter by
 * absolute path, so a moved checkout reinstalls.
 */
export function standardWebhooksPython(
  log = (message: string) => process.stderr.write(`${message}\n`),
): string {
  const tools = path.join(projectRoot, '.tools');
  fs.mkdirSync(tools, { recursive: true });
  const venv = path.join(fs.realpathSync(tools), 'standardwebhooks-venv');
  const python = path.join(venv, 'bin', 'python');
  const pinFile = path.join(venv, '.pins');
  const marker = `${standardWebhooksPythonPin} ${venv}`;
  if (fs.existsSync(python) && fs.existsSync(pinFile) && fs.readFileSync(pinFile, 'utf8').trim() === marker) {
    return python;
  }
  log(`webhook receiver: installing ${standardWebhooksPythonPin} into .tools/standardwebhooks-venv`);
  fs.rmSync(venv, { recursive: true, force: true });
  const run = (command: string, args: string[]) => {
    const result = spawnSync(command, args, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' },
      timeout: 300_000,
    });
    if (result.status !== 0) {
      throw new Error(
        `${command} ${args.join(' ')} failed${result.error ? `: ${result.error.message}` : ''}`,
      );
    }
  };
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    standardWebhooksPythonPin,
  ]);
  fs.writeFileSync(pinFile, `${marker}\n`);
  return python;
}

const readyWithinMs = 20_000;

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const killed = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killed);
}

/** Starts the receiver on a loopback port of its own choosing; it verifies with any of `secrets`. */
export async function startPythonWebhookReceiver(
  python: string,
  secrets: readonly string[],
): Promise<PythonWebhookReceiver> {
  const child = spawn(
    python,
    [path.join(projectRoot, 'test', 'support', 'webhook-receiver.py'), ...secrets],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
    },
  );
  const lines: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    let newline: number;
    while ((newline = stdout.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(stdout.slice(0, newline)) as ReceivedWebhook);
      stdout = stdout.slice(newline + 1);
    }
    for (const wake of waiters) wake();
  });
  let errorOutput = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      fail(
        new Error(`the webhook receiver did not listen within ${readyWithinMs} ms: ${errorOutput.trim()}`),
      );
    }, readyWithinMs);
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stopProcess(child).then(() => reject(error));
    };
    child.once('error', (error) => fail(new Error(`the webhook receiver could not start: ${error.message}`)));
    child.once('exit', () => fail(new Error(`the webhook receiver exited: ${errorOutput.trim()}`)));
    child.stderr?.on('data', (chunk: Buffer) => {
      errorOutput = (errorOutput + chunk.toString('utf8')).slice(-4000);
      const listening = /^listening (\d+)$/m.exec(errorOutput);
      if (listening && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(Number(listening[1]));
      }
    });
  });
  return {
    origin: `http://127.0.0.1:${port}`,
    received: () => [...lines],
    async waitForReceived(count, timeoutMs = 10_000) {
      if (lines.length >= count) return [...lines];
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(
            new Error(
              `the webhook receiver recorded ${lines.length} of ${count} requests in ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        const wake = () => {
          if (lines.length < count) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        };
        waiters.add(wake);
      });
      return [...lines];
    },
    stop: () => stopProcess(child),
  };
}
