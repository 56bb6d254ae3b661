// The stack's PostgreSQL runner in a checkout under a folder only its owner may enter (root's home, mktemp -d).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { installedPostgresBinaries, startEmbeddedPostgres } from '../../../dev/stack/embedded-postgres';
import { removeDataFolder } from '../../../dev/stack/postgres-account';
import { findFreePort } from '../../support/ports';

const runningAsRoot = process.getuid?.() === 0;

let privateFolder: string;

beforeEach(() => {
  privateFolder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'private-checkout-')));
  fs.chmodSync(privateFolder, 0o700);
});

afterEach(() => {
  // A failed test may leave a cluster the stack moved out of the private folder: it goes too.
  const link = path.join(privateFolder, 'checkout', '.data', 'postgres');
  if (fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink())
    removeDataFolder(link, fs.readlinkSync(link));
  fs.rmSync(privateFolder, { recursive: true, force: true });
});

async function query(url: string, sql: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0] as Record<string, unknown>;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL', () => {
  it('runs from a checkout under a folder only its owner may enter, keeps its data across starts, and answers queries', async () => {
    // The checkout's node_modules copy of the binaries, as `npm ci` leaves it under the private folder.
    const binaries = path.join(privateFolder, 'checkout', 'node_modules', 'native');
    fs.cpSync(installedPostgresBinaries(), binaries, { recursive: true, verbatimSymlinks: true });
    const dataDirectory = path.join(privateFolder, 'checkout', '.data', 'postgres');
    const messages: string[] = [];
    const start = async (persistent: boolean) =>
      startEmbeddedPostgres({
        dataDirectory,
        port: await findFreePort(),
        databaseName: 'private_checkout',
        persistent,
        binaryDirectory: binaries,
        log: (message) => messages.push(message),
      });

    // `npm start`: a persistent cluster, stopped and started again.
    const first = await start(true);
    try {
      await query(first.url, 'create table kept as select 42 as answer');
    } finally {
      await first.stop();
    }
    const second = await start(false);
    try {
      expect(second.dataDirectory).toBe(first.dataDirectory);
      expect(await query(second.url, 'select current_database() as name, answer from kept')).toEqual({
        name: 'private_checkout',
        answer: 42,
      });
      if (runningAsRoot) {
        // PostgreSQL runs as the postgres account, which cannot enter the private folder: both moved out of it,
        // the data reachable through the link where it was asked for, and the log says where and why.
        expect(second.binaryDirectory.startsWith(privateFolder)).toBe(false);
        expect(second.dataDirectory.startsWith(privateFolder)).toBe(false);
        expect(fs.lstatSync(dataDirectory).isSymbolicLink()).toBe(true);
        expect(fs.realpathSync(dataDirectory)).toBe(second.dataDirectory);
        expect(messages.join('\n')).toContain(`cannot reach ${dataDirectory}`);
        expect(messages.join('\n')).toContain(`cannot reach ${binaries}`);
      } else {
        // Run as the folder's owner, nothing needs to move.
        expect(second.binaryDirectory).toBe(binaries);
        expect(second.dataDirectory).toBe(dataDirectory);
        expect(messages).toEqual([]);
      }
    } finally {
      await second.stop();
    }
    // A throwaway cluster leaves nothing behind, wherever it lived.
    expect(fs.existsSync(second.dataDirectory)).toBe(false);
    expect(fs.existsSync(dataDirectory)).toBe(false);
  });

  it('fails with one error naming the cause when a PostgreSQL program cannot be run', async () => {
    // Executable, but its interpreter does not exist: the spawn itself fails (ENOENT).
    const binaries = path.join(privateFolder, 'broken');
    for (const folder of ['bin', 'lib', 'share'])
      fs.mkdirSync(path.join(binaries, folder), { recursive: true });
    for (const program of ['initdb', 'postgres']) {
      fs.writeFileSync(path.join(binaries, 'bin', program), '#!/nonexistent/interpreter\n', { mode: 0o755 });
    }
    fs.chmodSync(privateFolder, 0o755);
    const initdb = path.join(binaries, 'bin', 'initdb');

    await expect(
      startEmbeddedPostgres({
        dataDirectory: path.join(privateFolder, 'data'),
        port: await findFreePort(),
        databaseName: 'never_made',
        persistent: false,
        binaryDirectory: binaries,
        log: () => undefined,
      }),
    ).rejects.toThrow(`could not run ${initdb}: spawn ${initdb} ENOENT`);
    // The throwaway cluster's folder went with the failure.
    expect(fs.existsSync(path.join(privateFolder, 'data'))).toBe(false);
  });
});
