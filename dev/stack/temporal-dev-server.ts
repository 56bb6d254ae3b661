// Runs `temporal server start-dev` (SQLite file, Web UI, the booking search attributes) as a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { allSearchAttributes } from '../../src/workflows/shared';
import { describeExit, stopChild, stopWithParent } from './child-processes';

const cliTypeNames: Record<string, string> = {
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

export function searchAttributeArguments(): string[] {
  return allSearchAttributes.flatMap((key) => [
    '--search-attribute',
    `${key.name}=${cliTypeNames[key.type]}`,
  ]);
}

export interface RunningTemporal {
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

async function waitUntilServing(
  address: string,
  child: ChildProcess,
  timeoutMs: number,
  logFile: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let failure: Error | undefined;
  child.once(
    'error',
    (error) => (failure = new Error(`could not run the temporal dev server: ${error.message}`)),
  );
  child.once(
    'exit',
    (code, signal) =>
      (failure ??= new Error(`temporal dev server ${describeExit(code, signal)}; its log: ${logFile}`)),
  );
  for (;;) {
    if (failure) throw failure;
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.close();
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`temporal dev server not reachable at ${address}: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
}

export async function startTemporalDevServer(options: {
  executable: string;
  databaseFile: string;
  logFile: string;
  port: number;
  uiPort: number;
  namespace: string;
  /** A codec endpoint (the API's `/codec`, or a demo's loopback codec server), so the Web UI shows decrypted payloads. */
  uiCodecEndpoint?: string;
}): Promise<RunningTemporal> {
  const address = `127.0.0.1:${options.port}`;
  const log = fs.openSync(options.logFile, 'a');
  const child = spawn(
    options.executable,
    [
      'server',
      'start-dev',
      '--db-filename',
      options.databaseFile,
      '--ip',
      '127.0.0.1',
      '--port',
      String(options.port),
      '--ui-port',
      String(options.uiPort),
      '--namespace',
      options.namespace,
      '--log-level',
      'warn',
      ...(options.uiCodecEndpoint === undefined ? [] : ['--ui-codec-endpoint', options.uiCodecEndpoint]),
      ...searchAttributeArguments(),
    ],
    { stdio: ['ignore', log, log] },
  );
  // Later failures are reported by waitUntilServing or the stack's stop; this keeps them from being unhandled.
  child.on('error', () => undefined);
  stopWithParent(child);
  fs.closeSync(log);
  try {
    await waitUntilServing(address, child, 60_000, options.logFile);
  } catch (error) {
    await stopChild(child, 5000);
    throw error;
  }
  return { address, uiUrl: `http://127.0.0.1:${options.uiPort}`, stop: () => stopChild(child, 10_000) };
}
