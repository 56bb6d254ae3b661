// Starts test/support/api-process-main.ts as a child process: an API process of its own, as a deployment runs several.
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { TaskQueueNames } from '../../src/domain/task-queues';

/** What the child prints, followed by its REST and gRPC ports, once both listen. */
export const apiProcessReadyLine = 'api-process ready';

/** The child's inputs; DATABASE_URL and TEMPORAL_ADDRESS come from the test's own environment. */
export const apiProcessVariables = {
  /** JSON of extra configuration variables, on top of `testConfig`'s (IDP_ISSUER shared by the processes). */
  configuration: 'API_PROCESS_CONFIGURATION',
  /** JSON of the test's TaskQueueNames: the workflows it starts run on the test's workers. */
  taskQueues: 'API_PROCESS_TASK_QUEUES',
} as const;

const processScript = path.join(__dirname, 'api-process-main.ts');
const readyTimeoutMs = 60_000;

export interface ApiProcessOptions {
  configuration: Record<string, string>;
  taskQueueNames: TaskQueueNames;
  /** Where it finds Temporal, when not at the test run's server (a gate in front of it, say). */
  temporalAddress?: string;
}

export interface ApiProcess {
  readonly restBaseUrl: string;
  /** `127.0.0.1:<port>` of its plaintext gRPC server. */
  readonly grpcAddress: string;
  /** Signs in at its embedded identity provider and returns the access token. */
  signIn(email: string, password: string): Promise<string>;
  /** Stops the child (SIGTERM, then SIGKILL if it lingers) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills the child at once (SIGKILL), as a crash would, and waits for it to exit. */
  kill(): Promise<void>;
}

export async function startApiProcess(options: ApiProcessOptions): Promise<ApiProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', processScript], {
    cwd: path.resolve(__dirname, '../..'),
    env: {
      ...process.env,
      // Each process's metrics listener on a port of its own: several run at once, beside other suites.
      [apiProcessVariables.configuration]: JSON.stringify({ METRICS_PORT: '0', ...options.configuration }),
      [apiProcessVariables.taskQueues]: JSON.stringify(options.taskQueueNames),
      ...(options.temporalAddress === undefined ? {} : { TEMPORAL_ADDRESS: options.temporalAddress }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errorOutput = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errorOutput += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;

  async function stop(): Promise<void> {
    if (!running()) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
  }

  async function kill(): Promise<void> {
    if (!running()) return;
    child.kill('SIGKILL');
    await exited;
  }

  try {
    const [httpPort, grpcPort] = await new Promise<[string, string]>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(
        () => reject(new Error(`API process not ready in ${readyTimeoutMs} ms: ${errorOutput}`)),
        readyTimeoutMs,
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const ready = new RegExp(`${apiProcessReadyLine} (\\d+) (\\d+)`).exec(output);
        if (ready) {
          clearTimeout(timer);
          resolve([ready[1], ready[2]]);
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`API process exited before it was ready: ${errorOutput}`));
      });
    });
    const restBaseUrl = `http://127.0.0.1:${httpPort}`;
    return {
      restBaseUrl,
      grpcAddress: `127.0.0.1:${grpcPort}`,
      async signIn(email, password) {
        const response = await fetch(`${restBaseUrl}/api/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password }),
        });
        const body = (await response.json()) as { access_token?: string };
        if (response.status !== 200 || body.access_token === undefined) {
          throw new Error(`login answered ${response.status}: ${JSON.stringify(body)}`);
        }
        return body.access_token;
      },
      stop,
      kill,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
