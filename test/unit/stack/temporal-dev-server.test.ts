// Starting the Temporal dev server fails with one error naming the cause, never an unhandled 'error' event.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTemporalDevServer } from '../../../dev/stack/temporal-dev-server';

describe('temporal dev server start', () => {
  it('names the cause in one error when the temporal binary cannot be run', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-start-'));
    const executable = path.join(folder, 'temporal');
    fs.writeFileSync(executable, '#!/bin/sh\n', { mode: 0o644 });
    try {
      await expect(
        startTemporalDevServer({
          executable,
          databaseFile: path.join(folder, 'temporal.sqlite'),
          logFile: path.join(folder, 'temporal.log'),
          port: 1,
          uiPort: 2,
          namespace: 'default',
        }),
      ).rejects.toThrow(`could not run the temporal dev server: spawn ${executable} EACCES`);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
