// Starts test/support/api-process.ts as a child process: an API process of its own, as a deployment runs several.
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { JWK } from 'jose';
import type { TaskQueueNames } from '../../src/domain/task-queues';

/** What the child prints, followed by its REST and gRPC ports, once both listen. */
export const apiProcessReadyLine = 'api-process ready';

/** The child's inputs; DATABASE_URL and TEMPORAL_ADDRESS come from the test's own environment. */
export const apiProcessVariables = {
  /** JSON of extra configuration variables, read like the saga tests' (`sagaConfig`). */
  configuration: 'API_PROCESS_CONFIGURATION',
  /** JSON of the test's TaskQueueNames: the workflows it starts run on the test's workers. */
  taskQueues: 'API_PROCESS_TASK_QUEUES',
  /** Issuer of the tokens the test signs, and the public JWK that verifies them. */
  issuer: 'API_PROCESS_TOKEN_ISSUER',
  signingKey: 'API_PROCESS_SIGNING_KEY',
} as const;

const processScript = path.join(__dirname, 'api-process.ts');
const readyTimeoutMs = 60_000;

export interface ApiProcessOptions {
  configuration: Record<string, string>;
  taskQueueNames: TaskQueueNames;
  issuer: string;
  signingKey: JWK;
}

export interface ApiProcess {
  readonly restBaseUrl: string;
  /** `127.0.0.1:<port>` of its plaintext gRPC server. */
  readonly grpcAddress: string;
  /** Stops the child (SIGTERM, then SIGKILL if it lingers) and waits for it to exit. */
  stop(): Promise<void>;
}

export async function startApiProcess(options: ApiProcessOptions): Promise<ApiProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', processScript], {
    cwd: path.resolve(__dirname, '../..'),
    env: {
      ...process.env,
      [apiProcessVariables.configuration]: JSON.stringify(options.configuration),
      [apiProcessVariables.taskQueues]: JSON.stringify(options.taskQueueNames),
      [apiProcessVariables.issuer]: options.issuer,
      [apiProcessVariables.signingKey]: JSON.stringify(options.signingKey),
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
    return {
      restBaseUrl: `http://127.0.0.1:${httpPort}`,
      grpcAddress: `127.0.0.1:${grpcPort}`,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
