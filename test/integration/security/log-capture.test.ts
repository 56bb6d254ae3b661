// A whole booking flow through the real API and workers, every logger captured at trace: no personal data.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { format } from 'node:util';
import type { DestinationStream } from 'pino';
import { Runtime } from '@temporalio/worker';
import { createLogger } from '../../../src/logger';
import { bundleBookingWorkflows } from '../../../src/worker/booking-workers';
import {
  installTemporalRuntime,
  payloadPlaceholder,
  temporalLoggerFor,
} from '../../../src/worker/temporal-logger';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip } from '../../support/trips';
import { eventually } from '../../support/outcomes';
import { notificationsOf, paymentLedger } from '../../support/booking-records';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../../support/rest-app';
import { insertUser, type TestUser } from '../../support/users';

jest.setTimeout(180_000);

const passengers = [
  {
    first_name: 'Esmeralda',
    last_name: 'Quaresma',
    email: 'esmeralda.quaresma@log-capture.example',
    phone: '+351916273849',
  },
  {
    first_name: 'Florbela',
    last_name: 'Vilarinho',
    email: 'florbela.vilarinho@log-capture.example',
    phone: '+351927384950',
  },
];
const contact = { contact_email: 'quaresma.family@log-capture.example', contact_phone: '+351938495061' };
const paymentTokens = ['tok_chargeDeclined', 'tok_visa'];

/** Every line any logger of this process wrote: pino's JSON lines, the console, and raw stdout/stderr. */
const captured: string[] = [];
const capture: DestinationStream = { write: (line: string) => void captured.push(line) };
const consoleMethods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

/**
 * Libraries print payloads as base64 (the Temporal core's debug lines do): every base64-looking run, decoded
 * at each of the four alignments, since a truncated payload's tail starts anywhere.
 */
function decodedBase64Runs(text: string): string[] {
  const runs = text.match(/[A-Za-z0-9+/_-]{12,}={0,2}/g) ?? [];
  return runs.flatMap((run) =>
    [0, 1, 2, 3].map((offset) => Buffer.from(run.slice(offset), 'base64').toString('utf8')),
  );
}

let saga: SagaEnvironment;
let server: RunningServer;
let customer: TestUser;
let bearerToken: string;
let bookingId: string;

beforeAll(async () => {
  for (const method of consoleMethods) {
    jest.spyOn(console, method).mockImplementation((...values: unknown[]) => {
      captured.push(`console.${method}: ${format(...values)}`);
    });
  }
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    jest.spyOn(stream, 'write').mockImplementation((chunk: unknown, ...rest: unknown[]) => {
      captured.push(String(chunk));
      return write(chunk, ...rest);
    });
  }
  const workerLogger = createLogger({ level: 'trace', name: 'log-capture-worker' }, capture);
  // The process-wide SDK runtime as the worker process installs it, native core lines forwarded included.
  installTemporalRuntime(workerLogger);
  const workflowBundle = await bundleBookingWorkflows(
    temporalLoggerFor(workerLogger.child({ component: 'bundler' })),
  );
  saga = await startSagaEnvironment({
    environment: { LOG_LEVEL: 'trace' },
    logDestination: capture,
    workflowBundle,
  });
  const trip = await createTrip(saga.database, { seatCount: 8 });
  const issuer = await createTokenIssuer();
  customer = await insertUser(saga.database, saga.cipher, { roles: ['customer'] });
  bearerToken = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  server = await startServer(
    buildApp({
      database: saga.database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: saga.application,
      logger: createLogger({ level: 'trace', name: 'log-capture-api' }, capture),
    }),
  );

  const call = async (path: string, method: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearerToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  const created = await call(
    '/v1/bookings',
    'POST',
    {
      trip_id: trip.tripId,
      passengers: passengers.map((passenger, index) => ({
        ...passenger,
        seat_number: trip.seatNumbers[index],
        fare_class: 'STANDARD',
      })),
      ...contact,
    },
    { 'idempotency-key': randomUUID() },
  );
  expect(created.status).toBe(201);
  bookingId = created.body.id as string;
  const passengerIds = (created.body.passengers as { id: string }[]).map((passenger) => passenger.id);

  const declined = await call(`/v1/bookings/${bookingId}/payment`, 'POST', {
    payment_token: paymentTokens[0],
  });
  expect([declined.status, declined.body.code]).toEqual([402, 'PAYMENT_DECLINED']);
  const paid = await call(`/v1/bookings/${bookingId}/payment`, 'POST', { payment_token: paymentTokens[1] });
  expect([paid.status, paid.body.status]).toEqual([200, 'CONFIRMED']);

  const changed = await call(
    `/v1/bookings/${bookingId}`,
    'PATCH',
    { seat_changes: [{ passenger_id: passengerIds[0], seat_number: trip.seatNumbers[4] }] },
    { 'if-match': `"${paid.body.version as number}"` },
  );
  expect(changed.status).toBe(200);
  // A rejected value is personal data too: the 400 must not quote it into a log line.
  const rejected = await call(
    `/v1/bookings/${bookingId}`,
    'PATCH',
    { passenger_updates: [{ passenger_id: passengerIds[1], email: 'Florbela Vilarinho at home' }] },
    { 'if-match': `"${changed.body.version as number}"` },
  );
  expect(rejected.status).toBe(400);

  const cancelled = await call(`/v1/bookings/${bookingId}/cancel`, 'PUT', { reason: 'Plans changed' });
  expect([cancelled.status, cancelled.body.status]).toEqual([200, 'CANCELLED']);
  expect((await call(`/v1/bookings/${bookingId}`, 'GET')).status).toBe(200);

  // The cancellation's refund and notifications run after the answer: wait until the saga has done them.
  await eventually(
    async () => ({
      refundedMinor: (await paymentLedger(saga.database, bookingId)).refundedMinor,
      notifications: await notificationsOf(saga.database, bookingId),
    }),
    ({ refundedMinor, notifications }) =>
      refundedMinor > 0 && notifications.some((template) => template.includes('cancel')),
    { timeoutMs: 30_000 },
  );
  await saga.stopWorkers();
  // Forwarded native lines wait in the SDK's buffer for a while before they reach the logger: hand them over now.
  Runtime.instance().flushLogs();
});

afterAll(async () => {
  jest.restoreAllMocks();
  await server?.close();
  await saga?.stop();
});

describe('log capture over a whole booking flow', () => {
  it('logged something from the API, the workers, the activities and the Temporal SDK', () => {
    const pinoLines = captured
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(pinoLines.length).toBeGreaterThan(20);
    const requests = pinoLines.filter((line) => line.name === 'log-capture-api' && line.msg === 'request');
    expect(requests).toContainEqual(
      expect.objectContaining({ path: `/v1/bookings/${bookingId}/cancel`, status: 200 }),
    );
    expect(
      pinoLines.some((line) => line.name === 'saga-test' && line.msg === 'booking workers polling'),
    ).toBe(true);
    expect(
      pinoLines.some((line) => line.component === 'temporal-sdk' && line.activityType !== undefined),
    ).toBe(true);
    expect(
      pinoLines.some((line) => line.component === 'temporal-sdk' && line.workflowType !== undefined),
    ).toBe(true);
    // Trace lines with whole activations did reach the capture, their payloads replaced.
    expect(
      captured.filter((line) => line.includes('"level":10') && line.includes(payloadPlaceholder)),
    ).not.toEqual([]);
  });

  it('holds none of the passenger names, emails, phones, payment tokens or the bearer token', () => {
    const text = [captured.join('\n'), ...decodedBase64Runs(captured.join('\n'))].join('\n');
    const secrets = [
      ...passengers.flatMap((passenger) => [
        passenger.first_name,
        passenger.last_name,
        passenger.email,
        passenger.email.split('@')[0],
        passenger.phone,
        passenger.phone.slice(1),
      ]),
      contact.contact_email,
      contact.contact_phone,
      contact.contact_phone.slice(1),
      ...paymentTokens,
      'visa •••• 4242',
      bearerToken,
      bearerToken.split('.')[2],
    ];
    const leaked = secrets.filter((secret) => text.toLowerCase().includes(secret.toLowerCase()));
    expect(leaked).toEqual([]);
  });
});
