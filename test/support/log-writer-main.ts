// A process that logs through the service logger's standard output, for the log output test to read.
import { createLogger } from '../../src/logger';
import { exitOnceLogged } from '../../src/runtime/process';

const lines = Number(process.env.LOG_WRITER_LINES ?? '1');
const then = process.env.LOG_WRITER_THEN ?? 'exit';
const logger = createLogger({ level: 'info', name: `writer-${process.pid}` });
// Long enough that a few lines fill a chunk, short of any one line reaching an atomic pipe write by itself.
const padding = 'x'.repeat(300);
// A few lines per turn of the event loop, as a busy service logs: chunks are written while more lines arrive.
const linesPerTurn = 20;

function logFrom(first: number): void {
  const last = Math.min(lines, first + linesPerTurn - 1);
  for (let line = first; line <= last; line += 1) logger.info({ line, padding }, 'logged');
  if (last < lines) setImmediate(logFrom, last + 1);
  // 'exit': the way every service exits on purpose; 'wait': stay alive without logging until the test stops it.
  else if (then === 'exit') exitOnceLogged(0);
  else setInterval(() => undefined, 60_000);
}

logFrom(1);
