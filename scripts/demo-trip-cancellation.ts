// `npm run demo:trip-cancellation`: 2,000 confirmed bookings on one trip, the trip cancelled, the worker killed twice
// on the way, then an invariant scan of the database and the payment simulator's ledger. Prints the figures.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import { chromium } from 'playwright-core';
import { benchLimits, freePort } from '../bench/lib/bench-stack';
import { stopChild, stopWithParent } from '../dev/stack/child-processes';
import { loadOrCreateDevelopmentSecrets } from '../dev/stack/development-secrets';
import { startEmbeddedPostgres } from '../dev/stack/embedded-postgres';
import { startLoopbackCodecServer } from '../dev/stack/loopback-codec-server';
import { startTemporalDevServer } from '../dev/stack/temporal-dev-server';
import { createBookingApplication } from '../src/application/bookings';
import type { BookingApplication, TripCancellationView } from '../src/application/interface';
import { loadConfig, plaintextTemporalEnvironment } from '../src/config';
import { createDatabase } from '../src/db/connection';
import { migrateWithDatabase } from '../src/db/migrate';
import type { Actor } from '../src/domain/actor';
import { findDomainError } from '../src/domain/errors';
import { createLogger } from '../src/logger';
import { projectRoot } from '../src/project-root';
import { nodeFlagsOf } from '../src/runtime/node-flags';
import { createFieldCipherFromConfig } from '../src/security/field-cipher-from-config';
import { createBookingDataConverter } from '../src/security/temporal-payload-codec';
import { tripCancellationWorkflowId } from '../src/workflows/trip-cancellation-shared';
import { actorOf, insertUser } from '../test/support/users';

const bookingCount = Number(process.env.DEMO_BOOKINGS ?? 2000);
/** Five stops, four legs: 500 seats × 4 legs hold 2,000 one-seat bookings (a seat number has at most 99 rows). */
const stopCount = 5;
const seatsPerRow = 6;
const createConcurrency = 16;
const killAtDone = [0.2, 0.6];
const screenshot = process.argv.includes('--screenshot');

const startedAt = performance.now();
function log(message: string): void {
  const elapsed = ((performance.now() - startedAt) / 1000).toFixed(0).padStart(4);
  process.stdout.write(`[demo ${elapsed}s] ${message}\n`);
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** A route of `stopCount` stops, a bus of enough seats, one trip a week from now with its fares. */
async function seedTrip(database: Knex, seatCount: number) {
  const suffix = Date.now().toString(36).toUpperCase();
  const stopCodes = Array.from({ length: stopCount }, (_, index) => `D${index}${suffix}`);
  await database('stops').insert(
    stopCodes.map((code, index) => ({
      code,
      name: `Demo stop ${index + 1}`,
      city: `Demo city ${index + 1}`,
      country_code: 'PT',
      time_zone: 'Europe/Lisbon',
    })),
  );
  const [{ id: routeId }] = await database('routes')
    .insert({
      code: `DEMO-${suffix}`,
      origin_stop_code: stopCodes[0],
      destination_stop_code: stopCodes[stopCount - 1],
      operator_name: 'Demo lines',
      distance_km: 400,
      typical_duration_minutes: 60 * (stopCount - 1),
    })
    .returning<{ id: string }[]>('id');
  await database('route_stops').insert(
    stopCodes.slice(1, -1).map((code, index) => ({
      route_id: routeId,
      position: index + 1,
      stop_code: code,
      minutes_from_origin: 60 * (index + 1),
    })),
  );
  const rowCount = Math.ceil(seatCount / seatsPerRow);
  const [{ id: layoutId }] = await database('seat_layouts')
    .insert({
      code: `DEMO-${suffix}`,
      name: `Demo double-decker of ${seatCount} seats`,
      row_count: rowCount,
      seats_per_row: seatsPerRow,
      seat_count: seatCount,
    })
    .returning<{ id: string }[]>('id');
  const seatNumbers = Array.from(
    { length: seatCount },
    (_, index) => `${Math.floor(index / seatsPerRow) + 1}${'ABCDEF'[index % seatsPerRow]}`,
  );
  await database('seats').insert(
    seatNumbers.map((seatNumber, index) => ({
      layout_id: layoutId,
      seat_number: seatNumber,
      row_number: Math.floor(index / seatsPerRow) + 1,
      fare_class: 'STANDARD',
    })),
  );
  const departureTime = new Date(Date.now() + 7 * 24 * 3_600_000);
  const [{ id: tripId }] = await database('trips')
    .insert({
      route_id: routeId,
      layout_id: layoutId,
      departure_time: departureTime,
      arrival_time: new Date(departureTime.getTime() + 60 * (stopCount - 1) * 60_000),
    })
    .returning<{ id: string }[]>('id');
  await database('trip_fares').insert([
    { trip_id: tripId, fare_class: 'STANDARD', amount_minor: 2500, currency: 'EUR' },
    { trip_id: tripId, fare_class: 'PREMIUM', amount_minor: 4000, currency: 'EUR' },
  ]);
  return { tripId, stopCodes, seatNumbers };
}

/** The call's answer, retried (by `again`) while it says to come back later. */
async function untilAnswered<T>(first: () => Promise<T>, again: () => Promise<T>): Promise<T> {
  let call = first;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const code = findDomainError(error)?.code;
      if (attempt >= 60 || (code !== 'BOOKING_PROCESSING' && code !== 'UNAVAILABLE')) throw error;
      await sleep(500);
      call = again;
    }
  }
}

/** Runs `work` over `count` indexes, `concurrency` at a time. */
async function pooled(count: number, concurrency: number, work: (index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next;
        next += 1;
        await work(index);
      }
    }),
  );
}

async function main(): Promise<void> {
  if (!process.argv.includes('--no-build')) {
    log('building dist/ (npm run build): the worker runs the compiled code and the workflow bundle');
    const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bus-booking-trip-cancellation-'));
  const logDirectory = path.join(directory, 'logs');
  fs.mkdirSync(logDirectory, { recursive: true });
  const [postgresPort, temporalPort, uiPort, metricsPort, codecPort] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const stoppers: (() => Promise<void>)[] = [];
  try {
    await run();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  } finally {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
    if (!process.env.DEMO_KEEP_DIRECTORY) fs.rmSync(directory, { recursive: true, force: true });
  }
  // Timers of closed clients may still be pending: the demo is over.
  process.exit(process.exitCode ?? 0);

  async function run(): Promise<void> {
    log(`starting PostgreSQL and the Temporal dev server in ${directory}`);
    const { ensureTemporalCli } = require(path.join(projectRoot, 'scripts', 'temporal-cli.cjs')) as {
      ensureTemporalCli: () => string;
    };
    const [postgres, temporal] = await Promise.all([
      startEmbeddedPostgres({
        dataDirectory: path.join(directory, 'postgres'),
        port: postgresPort,
        databaseName: 'bookings',
        persistent: false,
        logFile: path.join(logDirectory, 'postgres.log'),
        log,
      }),
      startTemporalDevServer({
        executable: ensureTemporalCli(),
        databaseFile: path.join(directory, 'temporal.sqlite'),
        logFile: path.join(logDirectory, 'temporal.log'),
        port: temporalPort,
        uiPort,
        namespace: 'default',
        // Decoded in the demo process with the demo's keys, so the progress in the UI is readable.
        uiCodecEndpoint: `http://127.0.0.1:${codecPort}/codec`,
      }),
    ]);
    stoppers.push(
      () => postgres.stop(),
      () => temporal.stop(),
    );
    const environment: NodeJS.ProcessEnv = {
      ...process.env,
      ...loadOrCreateDevelopmentSecrets(directory),
      ...plaintextTemporalEnvironment,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      WORKER_METRICS_HOST: '127.0.0.1',
      WORKER_METRICS_PORT: String(metricsPort),
      NOTIFICATIONS_OUTBOX_DIR: path.join(directory, 'outbox'),
      ...benchLimits,
    };
    const config = loadConfig(environment);
    const codecServer = await startLoopbackCodecServer({
      dataConverter: createBookingDataConverter(config),
      port: codecPort,
      allowedOrigins: [temporal.uiUrl, `http://localhost:${uiPort}`],
      logger: createLogger({ level: 'warn', name: 'demo-codec' }),
    });
    stoppers.push(() => codecServer.stop());
    const cipher = createFieldCipherFromConfig(config);
    const database = createDatabase(postgres.url, { poolSize: 20, applicationName: 'demo' });
    stoppers.push(() => database.destroy());
    await migrateWithDatabase(database);
    const seatCount = Math.ceil(bookingCount / (stopCount - 1));
    const trip = await seedTrip(database, seatCount);
    const customers: Actor[] = [];
    for (let index = 0; index < 20; index += 1) {
      customers.push(actorOf(await insertUser(database, cipher, { roles: ['customer'] })));
    }
    const agent = actorOf(await insertUser(database, cipher, { roles: ['agent'] }));

    let worker: ChildProcess | undefined;
    const startWorker = async (generation: number): Promise<void> => {
      const logFile = path.join(logDirectory, `worker-${generation}.log`);
      const descriptor = fs.openSync(logFile, 'a');
      const child = spawn(
        process.execPath,
        [...nodeFlagsOf('worker/main.js'), path.join(projectRoot, 'dist', 'src', 'worker', 'main.js')],
        {
          cwd: projectRoot,
          env: { ...environment, LOG_LEVEL: 'info' },
          stdio: ['ignore', descriptor, descriptor],
        },
      );
      fs.closeSync(descriptor);
      stopWithParent(child);
      worker = child;
      const deadline = Date.now() + 180_000;
      while (!fs.readFileSync(logFile, 'utf8').includes('booking workers polling')) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`the worker did not start; see ${logFile}`);
        await sleep(200);
      }
    };
    stoppers.push(() => (worker === undefined ? Promise.resolve() : stopChild(worker, 15_000)));
    await startWorker(1);

    const connection = await Connection.connect({ address: temporal.address });
    stoppers.push(() => connection.close());
    const temporalClient = new Client({
      connection,
      namespace: 'default',
      dataConverter: createBookingDataConverter(config),
    });
    const application: BookingApplication = createBookingApplication({
      config,
      database,
      temporal: temporalClient,
      cipher,
    });

    log(
      `creating and paying ${bookingCount} bookings on trip ${trip.tripId} (${seatCount} seats × ${stopCount - 1} legs)`,
    );
    const createdAt = performance.now();
    await pooled(bookingCount, createConcurrency, async (index) => {
      const leg = Math.floor(index / seatCount);
      const seatNumber = trip.seatNumbers[index % seatCount];
      const customer = customers[index % customers.length];
      const bookingId = randomUUID();
      const create = () =>
        application.createBooking(
          customer,
          {
            tripId: trip.tripId,
            passengers: [
              {
                firstName: 'Demo',
                lastName: `Passenger ${index + 1}`,
                email: 'demo@example.com',
                seatNumber,
                fareClass: 'STANDARD',
              },
            ],
            contactEmail: 'demo@example.com',
            boardingStop: trip.stopCodes[leg],
            alightingStop: trip.stopCodes[leg + 1],
          },
          { bookingId },
        );
      // Under load an answer can fall due before the seats are held (BOOKING_PROCESSING) or Temporal can be slow
      // to answer (UNAVAILABLE): the same booking id and the same payment attempt id make each retry the same call.
      await untilAnswered(create, () => application.getBooking(customer, bookingId));
      const attemptId = randomUUID();
      const pay = () =>
        application.confirmPayment(customer, bookingId, { paymentToken: 'tok_visa' }, { attemptId });
      await untilAnswered(pay, pay);
      if ((index + 1) % 250 === 0) log(`  ${index + 1} confirmed`);
    });
    const confirmed = await database('bookings')
      .where({ trip_id: trip.tripId, status: 'CONFIRMED' })
      .count<{ count: string }[]>('id as count');
    log(
      `${confirmed[0].count} bookings CONFIRMED in ${((performance.now() - createdAt) / 1000).toFixed(1)} s`,
    );

    log('cancelling the trip');
    const cancelStartedAt = performance.now();
    const started = await application.cancelTrip(agent, trip.tripId, {
      reason: 'The bus broke down and no replacement is available',
    });
    log(`cancellation ${started.status}: ${started.counts.openAtStart} open at the start`);
    let kills = 0;
    let screenshots: Promise<void> = Promise.resolve();
    let last: TripCancellationView = started;
    for (;;) {
      try {
        last = await application.getTripCancellation(agent, trip.tripId);
      } catch (error) {
        log(
          `  progress unreadable while the worker is away (${error instanceof Error ? error.message : String(error)})`,
        );
        await sleep(1000);
        continue;
      }
      if (last.status === 'FINISHED') break;
      const share = last.counts.done / Math.max(1, last.counts.openAtStart);
      if (kills < killAtDone.length && share >= killAtDone[kills]) {
        kills += 1;
        log(`  killing the worker (SIGKILL) at ${last.counts.done} done, ${last.counts.remaining} left`);
        worker?.kill('SIGKILL');
        await sleep(2000);
        await startWorker(kills + 1);
        log(`  worker ${kills + 1} started`);
        if (screenshot && kills === 1) {
          const handle = temporalClient.workflow.getHandle(tripCancellationWorkflowId(trip.tripId));
          screenshots = takeScreenshots(
            temporal.uiUrl,
            handle.workflowId,
            async () => (await handle.describe()).runId,
          );
        }
      }
      await sleep(500);
    }
    const durationSeconds = (performance.now() - cancelStartedAt) / 1000;
    log(
      `cancellation FINISHED in ${durationSeconds.toFixed(1)} s after ${kills} worker kills: ` +
        `${last.counts.cancelled} cancelled, ${last.counts.alreadyEnded} already ended, ${last.counts.failed} failed`,
    );

    // The pages are of a running cancellation; the stack must serve them until Chromium has drawn them.
    await screenshots;
    const scan = await invariantScan(database, trip.tripId);
    log(`invariant scan: ${JSON.stringify(scan)}`);
    const ok =
      scan.openBookings === 0 &&
      scan.activeSeats === 0 &&
      scan.chargesNotRefundedExactlyOnce === 0 &&
      scan.bookingsRefundedOtherThanCaptured === 0 &&
      last.failedBookings.length === 0;
    process.stdout.write(
      `${JSON.stringify({ bookings: bookingCount, durationSeconds: Number(durationSeconds.toFixed(1)), workerKills: kills, counts: last.counts, ...scan, ok })}\n`,
    );
    if (!ok) process.exitCode = 1;
  }
}

/** What must hold after a trip's cancellation, read from the tables and the payment simulator's ledger. */
async function invariantScan(database: Knex, tripId: string) {
  const count = async (sql: string) =>
    Number((await database.raw<{ rows: { count: string }[] }>(sql, [tripId])).rows[0].count);
  return {
    openBookings: await count(
      `SELECT count(*) FROM bookings WHERE trip_id = ? AND status IN ('PENDING_PAYMENT', 'CONFIRMED')`,
    ),
    cancelledBookings: await count(
      `SELECT count(*) FROM bookings WHERE trip_id = ? AND status = 'CANCELLED'`,
    ),
    activeSeats: await count(
      `SELECT count(*) FROM seat_allocations WHERE trip_id = ? AND state IN ('HELD', 'BOOKED')`,
    ),
    charges: await count(
      `SELECT count(*) FROM payment_simulator.charges AS charge JOIN bookings AS booking
          ON charge.idempotency_key LIKE booking.id || ':%'
       WHERE booking.trip_id = ? AND charge.status = 'APPROVED'`,
    ),
    // A charge refunded twice would have two refund rows (or be refused by the ledger's own check).
    chargesNotRefundedExactlyOnce: await count(
      `SELECT count(*) FROM payment_simulator.charges AS charge JOIN bookings AS booking
          ON charge.idempotency_key LIKE booking.id || ':%'
       WHERE booking.trip_id = ? AND charge.status = 'APPROVED'
         AND ((SELECT count(*) FROM payment_simulator.refunds AS refund WHERE refund.charge_id = charge.id) <> 1
              OR charge.refunded_minor <> charge.amount_minor)`,
    ),
    bookingsRefundedOtherThanCaptured: await count(
      `SELECT count(*) FROM bookings WHERE trip_id = ? AND amount_refunded_minor <> amount_paid_minor`,
    ),
  };
}

/**
 * The Web UI pages shot during the cancellation, each once the decoded text it must show is drawn: the memo with
 * the progress counts, the overview with the decoded input and the activities in flight. (The User Metadata tab's
 * current details never appeared within a minute in headless Chromium.)
 */
const screenshotPages = [
  { tab: '/memo', file: 'trip-cancellation-progress.png', shows: '"remaining"' },
  { tab: '', file: 'trip-cancellation-workflow.png', shows: '"reason"' },
];

const screenshotStepTimeoutMs = 60_000;

/**
 * The cancellation's newest run in the Temporal Web UI as PNGs, from one headless Chromium (it shares the machine).
 * The workflow continues as new every few hundred bookings, so each page asks for the run current by then.
 */
async function takeScreenshots(
  uiUrl: string,
  workflowId: string,
  newestRunId: () => Promise<string>,
): Promise<void> {
  const directory = path.join(projectRoot, 'docs', 'images');
  fs.mkdirSync(directory, { recursive: true });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    for (const shot of screenshotPages) {
      const file = path.join(directory, shot.file);
      const url = `${uiUrl}/namespaces/default/workflows/${workflowId}/${await newestRunId()}${shot.tab}`;
      try {
        await page.goto(url, { timeout: screenshotStepTimeoutMs });
        await page
          .getByText(shot.shows)
          .first()
          .waitFor({ state: 'visible', timeout: screenshotStepTimeoutMs });
        await page.screenshot({ path: file });
        log(`  screenshot of ${url}: ${file}`);
      } catch (error) {
        log(
          `  no screenshot of ${url}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        );
      }
    }
  } finally {
    await browser.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
