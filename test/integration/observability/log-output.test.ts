// The services' log lines on standard output: written in chunks, yet whole, in order, and none left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';

jest.setTimeout(60_000);

const writerScript = path.join(__dirname, '..', '..', 'support', 'log-writer-main.ts');
const tsxWriter = `"${process.execPath}" --import tsx "${writerScript}"`;
// A reader that falls behind for a moment, as a log shipper does: the pipe fills while the writers still write.
const laggingReader = '{ sleep 1; cat; }';

interface LoggedLine {
  name: string;
  line: number;
  msg: string;
}

/** Runs `command` in a shell, its standard output one pipe whoever writes to it, and collects the lines. */
function collect(command: string, environment: Record<string, string>) {
  const child: ChildProcess = spawn('bash', ['-o', 'pipefail', '-c', command], {
    env: { ...process.env, ...environment },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const reader = createInterface({ input: child.stdout! });
  reader.on('line', (line) => lines.push(line));
  const firstLine = once(reader, 'line');
  // 'close', not 'exit': only then has every line the process wrote been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, lines, exited, firstLine };
}

describe('log lines on standard output', () => {
  it('writes every line before the process exits, in order, though its reader lags behind', async () => {
    const run = collect(`${tsxWriter} | ${laggingReader}`, {
      LOG_WRITER_LINES: '2000',
      LOG_WRITER_THEN: 'exit',
    });
    expect(await run.exited).toBe(0);
    const logged = run.lines.map((line) => JSON.parse(line) as LoggedLine);
    expect(logged.map((line) => line.line)).toEqual(Array.from({ length: 2000 }, (_, index) => index + 1));
  });

  it('writes a lone line while the process keeps running', async () => {
    const run = collect(`exec ${tsxWriter}`, { LOG_WRITER_LINES: '1', LOG_WRITER_THEN: 'wait' });
    try {
      await run.firstLine;
      expect(JSON.parse(run.lines[0])).toMatchObject({ line: 1, msg: 'logged' });
    } finally {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });

  it('keeps the lines of processes sharing one pipe whole', async () => {
    const run = collect(`{ ${tsxWriter} & ${tsxWriter} & ${tsxWriter} & wait; } | ${laggingReader}`, {
      LOG_WRITER_LINES: '3000',
      LOG_WRITER_THEN: 'exit',
    });
    expect(await run.exited).toBe(0);
    // A line cut by another process's chunk would not parse, or would leave a writer short of lines.
    const logged = run.lines.map((line) => JSON.parse(line) as LoggedLine);
    const linesPerWriter = new Map<string, number[]>();
    for (const { name, line } of logged) {
      const writerLines = linesPerWriter.get(name) ?? [];
      writerLines.push(line);
      linesPerWriter.set(name, writerLines);
    }
    expect([...linesPerWriter.values()]).toEqual(
      Array.from({ length: 3 }, () => Array.from({ length: 3000 }, (_, index) => index + 1)),
    );
  });
});
