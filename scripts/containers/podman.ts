// Shared by the container tests: podman calls, free ports, the demo-data seed, health waits, timed stops, REST bookings.
import { execFile, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { promisify } from 'node:util';
import { bookingAnswerOf, createBookingServiceClient, successOf } from '@bus-booking/client';
import path from 'node:path';
import { aliceDemoUser } from '../../dev/seed/demo-users';
import { findFreeSeat, holdSeatForAlice, settledBooking } from '../lib/booking-flow';

const run = promisify(execFile);

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The host's build of dev/ (`npm run build:dev`), mounted into a one-off container of the image to seed it. */
const devBuild = path.resolve(__dirname, '..', '..', 'dist', 'dev');

/**
 * Run by `node -e` in the service image with the host's dev/ build mounted beside its dist/src: the demo network, a
 * week of timetable and the demo accounts, written with the container's own configuration (its encryption keys), as
 * `npm start` seeds its database. The image itself carries no demo data.
 */
const seedScript = `
const { loadConfig } = require('./dist/src/config');
const { createDatabase } = require('./dist/src/db/connection.js');
const { seedDemoData } = require('./dist/dev/seed/index.js');
const { createFieldCipherFromConfig } = require('./dist/src/security/field-cipher-from-config.js');
const config = loadConfig(process.env);
const database = createDatabase(process.env.DATABASE_URL, { poolSize: 2 });
seedDemoData(database, { cipher: createFieldCipherFromConfig(config), today: new Date(), days: 7, environment: config.environment })
  .then((summary) => console.log(JSON.stringify(summary)))
  .finally(() => database.destroy());
`;

/** Seeds the demo data from a one-off container of the image, with the given podman run arguments (network, env). */
export async function seedDemoDataWith(image: string, runArguments: string[]): Promise<string> {
  const output = await podman(
    'run',
    '--rm',
    ...runArguments,
    '--volume',
    `${devBuild}:/app/dist/dev:ro`,
    image,
    'node',
    '-e',
    seedScript,
  );
  return output.split('\n').at(-1) ?? '';
}

/** Seeds the demo data as a running container would: its image, its environment and its networks. */
export async function seedDemoDataLike(container: string): Promise<string> {
  const image = await podman('inspect', '--format', '{{.ImageName}}', container);
  const environment = JSON.parse(
    await podman('inspect', '--format', '{{json .Config.Env}}', container),
  ) as string[];
  const networks = Object.keys(
    JSON.parse(
      await podman('inspect', '--format', '{{json .NetworkSettings.Networks}}', container),
    ) as object,
  );
  return seedDemoDataWith(image, [
    ...networks.flatMap((network) => ['--network', network]),
    ...environment.flatMap((variable) => ['--env', variable]),
  ]);
}

export async function podman(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('podman', args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (error) {
    const failed = error as { stderr?: string; message: string };
    throw new Error(`podman ${args.join(' ')} failed: ${failed.stderr?.trim() || failed.message}`);
  }
}

/** `podman healthcheck run` answers "healthy" or fails; healthchecks do not run by themselves without systemd. */
export function healthcheckPasses(container: string): boolean {
  return spawnSync('podman', ['healthcheck', 'run', container], { stdio: 'ignore' }).status === 0;
}

export async function containerState(container: string): Promise<{ running: boolean; exitCode: number }> {
  const [running, exitCode] = (
    await podman('inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', container)
  ).split(' ');
  return { running: running === 'true', exitCode: Number(exitCode) };
}

/** Seconds from now until the container's health check passes; fails early when the container exits. */
export async function secondsUntilHealthy(
  container: string,
  timeoutMs: number,
  since = Date.now(),
): Promise<number> {
  for (;;) {
    if (healthcheckPasses(container)) return (Date.now() - since) / 1000;
    const state = await containerState(container);
    if (!state.running) {
      const logs = await podman('logs', '--tail', '30', container).catch(() => '');
      throw new Error(`${container} exited with ${state.exitCode} before it was healthy:\n${logs}`);
    }
    if (Date.now() - since > timeoutMs) {
      const logs = await podman('logs', '--tail', '30', container).catch(() => '');
      throw new Error(`${container} not healthy within ${timeoutMs / 1000} s:\n${logs}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** `podman stop -t grace`: how long the container took to exit after SIGTERM, and its exit code. */
export async function timedStop(
  container: string,
  graceSeconds: number,
): Promise<{ seconds: number; exitCode: number }> {
  const started = Date.now();
  await podman('stop', '-t', String(graceSeconds), container);
  const seconds = (Date.now() - started) / 1000;
  return { seconds, exitCode: (await containerState(container)).exitCode };
}

/**
 * fetch that repeats a request the edge answered 502, 503 or 504 (a replica that just died), as clients are told to:
 * the same request, so the same Idempotency-Key.
 */
function retryingFetch(retries: { count: number }): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    for (let attempt = 1; ; attempt += 1) {
      const response = await fetch(request.clone());
      if (![502, 503, 504].includes(response.status) || attempt === 5) return response;
      retries.count += 1;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
}

/** Signs in with the password grant, searches, holds a seat, pays, and reads the booking back: its final status. */
export async function bookOverRest(
  baseUrl: string,
): Promise<{ bookingId: string; status: string; seconds: number; retries: number }> {
  const started = Date.now();
  const retries = { count: 0 };
  const fetchWithRetries = retryingFetch(retries);
  const tokens = successOf(
    await createBookingServiceClient({ baseUrl, fetch: fetchWithRetries }).POST('/api/auth/login', {
      body: { email: aliceDemoUser.email, password: aliceDemoUser.password },
    }),
  );
  const client = createBookingServiceClient({
    baseUrl,
    accessToken: tokens.access_token,
    fetch: fetchWithRetries,
  });
  const seat = await findFreeSeat(client);
  const { created, bookingId } = await holdSeatForAlice(client, seat);
  const held = await settledBooking(client, created, bookingId);
  if (held.status !== 'PENDING_PAYMENT')
    throw new Error(`booking ${bookingId} is ${held.status}, expected PENDING_PAYMENT (seats held)`);
  const paid = bookingAnswerOf(
    await client.POST('/v1/bookings/{booking_id}/payment', {
      params: { path: { booking_id: bookingId }, header: { 'Idempotency-Key': randomUUID() } },
      body: { payment_token: 'tok_visa' },
    }),
  );
  await settledBooking(client, paid, bookingId);
  const read = await settledBooking(
    client,
    bookingAnswerOf(
      await client.GET('/v1/bookings/{booking_id}', { params: { path: { booking_id: bookingId } } }),
    ),
    bookingId,
  );
  return { bookingId, status: read.status, seconds: (Date.now() - started) / 1000, retries: retries.count };
}
