// The real entry points, compiled as `npm run build` compiles them, started as child processes with the documented variables.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root';

export type EntryPointName = 'api' | 'worker';

export interface CompiledProject {
  /** A folder of this run's own under dist/, so parallel runs and `npm start` never read a half-written file. */
  readonly outputDirectory: string;
  /** `<output>/src/<name>/main.js`, what `npm run api` and `npm run worker` start from dist/. */
  entryPoint(name: EntryPointName): string;
  remove(): void;
}

/** Runs `tsc -p tsconfig.build.json` (the build script) into a fresh folder; a type error fails it, as it fails the build. */
export async function compileProject(options: { timeoutMs: number }): Promise<CompiledProject> {
  mkdirSync(path.join(projectRoot, 'dist'), { recursive: true });
  const outputDirectory = mkdtempSync(path.join(projectRoot, 'dist', 'test-build-'));
  const remove = () => rmSync(outputDirectory, { recursive: true, force: true });
  const compiler = require.resolve('typescript/bin/tsc');
  const buildArguments = ['-p', 'tsconfig.build.json', '--outDir', outputDirectory];
  // The build config is incremental; its build-info file must live with this output, not dist/'s.
  buildArguments.push('--tsBuildInfoFile', path.join(outputDirectory, '.tsbuildinfo'));
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        [compiler, ...buildArguments],
        { cwd: projectRoot, timeout: options.timeoutMs, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          error === null
            ? resolve()
            : reject(new Error(`tsc -p tsconfig.build.json failed (${error.message}):\n${stdout}${stderr}`)),
      );
    });
    // `npm run build`'s second step: the workflow bundle workers start from, written beside the compiled code.
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        [path.join(projectRoot, 'scripts', 'build-workflow-bundle.cjs'), outputDirectory],
        { cwd: projectRoot, timeout: options.timeoutMs, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          error === null
            ? resolve()
            : reject(new Error(`build-workflow-bundle failed (${error.message}):\n${stdout}${stderr}`)),
      );
    });
  } catch (error) {
    remove();
    throw error;
  }
  return {
    outputDirectory,
    entryPoint: (name) => path.join(outputDirectory, 'src', name, 'main.js'),
    remove,
  };
}

/** One pino line of a process's standard output. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface EntryPointProcess {
  /** Settles with the first log line whose message is `message`; rejects when the process exits first or time runs out. */
  waitForLog(message: string, timeoutMs: number): Promise<LogLine>;
  /** SIGTERM, then the exit; rejects (after a SIGKILL) when the process is still running after `timeoutMs`. */
  stop(timeoutMs: number): Promise<ProcessExit>;
  /** SIGKILL if it still runs: for clean-up after a failed test. */
  kill(): Promise<void>;
  /** Everything it printed, for failure messages. */
  output(): string;
}

/**
 * Starts `node <script>` with only the given variables (and PATH): the process must run on what the README's
 * configuration table documents, nothing inherited from the test runner.
 */
export function startEntryPoint(script: string, environment: Record<string, string>): EntryPointProcess {
  const child = spawn(process.execPath, [script], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const lines: LogLine[] = [];
  const listeners = new Set<() => void>();
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output += text;
    pending += text;
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete) {
      const parsed = parseLogLine(line);
      if (parsed !== undefined) lines.push(parsed);
    }
    for (const listener of listeners) listener();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const running = () => child.exitCode === null && child.signalCode === null;

  return {
    waitForLog(message, timeoutMs) {
      return new Promise<LogLine>((resolve, reject) => {
        const check = () => {
          const found = lines.find((line) => line.msg === message);
          if (found === undefined) return;
          finish();
          resolve(found);
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no "${message}" in ${timeoutMs} ms; output:\n${output}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exited.then((exit) => {
          finish();
          reject(new Error(`exited (${JSON.stringify(exit)}) before "${message}"; output:\n${output}`));
        });
        check();
      });
    },
    async stop(timeoutMs) {
      if (running()) child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), timeoutMs);
      });
      const outcome = await Promise.race([exited, deadline]);
      clearTimeout(timer);
      if (outcome !== 'late') return outcome;
      child.kill('SIGKILL');
      await exited;
      throw new Error(`still running ${timeoutMs} ms after SIGTERM; output:\n${output}`);
    },
    async kill() {
      if (!running()) return;
      child.kill('SIGKILL');
      await exited;
    },
    output: () => output,
  };
}

function parseLogLine(line: string): LogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(line) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { level, msg } = parsed as Partial<LogLine>;
    return typeof level === 'number' && typeof msg === 'string' ? (parsed as LogLine) : undefined;
  } catch {
    return undefined;
  }
}
