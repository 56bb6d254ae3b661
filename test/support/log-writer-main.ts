// A process that logs through the service logger's standard output, for the log output test to read.
import { createLogger } from '../../src/logger';

const lines = Number(process.env.LOG_WRITER_LINES ?? '1');
const then = process.env.LOG_WRITER_THEN ?? 'exit';
const logger = createLogger({ level: 'info', name: `writer-${process.pid}` });
// Long enough that a few lines fill a chunk, short of any one line reaching an atomic pipe write by itself.
const padding = 'x'.repeat(300);
for (let line = 1; line <= lines; line += 1) logger.info({ line, padding }, 'logged');
if (then === 'exit') process.exit(0);
// 'wait': stay alive without logging, until the test stops the process.
setInterval(() => undefined, 60_000);
