// Counts the hops of one REST create with an Idempotency-Key: the API's PostgreSQL statements and its Temporal calls.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { Knex } from 'knex';
import { createBookingApplication } from '../../../src/application/bookings';
import { createBookingDataConverter } from '../../../src/security/temporal-payload-codec';
import { openTestDatabase } from '../../support/database';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../../support/rest-app';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import { eventually } from '../../support/outcomes';
import { insertUser } from '../../support/users';

jest.setTimeout(120_000);

let saga: SagaEnvironment;
let apiDatabase: Knex;
let connection: Connection;
let server: RunningServer;
let trip: TestTrip;
let token: string;
const statements: string[] = [];
const temporalCalls: string[] = [];

/** Records the method of every gRPC call the API's Temporal client makes. */
const countingInterceptor: Interceptor = (options, nextCall) => {
  temporalCalls.push(String(options.method_definition.path).split('/').pop() ?? '');
  return new InterceptingCall(nextCall(options));
};

beforeAll(async () => {
  saga = await startSagaEnvironment();
  trip = await createTrip(saga.database, { seatCount: 12 });
  const issuer = await createTokenIssuer();
  const customer = await insertUser(saga.database, saga.cipher, { roles: ['customer'] });
  token = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  // The API's own pool and Temporal connection, so only the API's hops are counted (the workers have their own).
  apiDatabase = openTestDatabase({ applicationName: 'create-hops' });
  apiDatabase.on('query', (query: { sql: string }) => statements.push(query.sql));
  connection = await Connection.connect({
    address: saga.config.temporal.address,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), countingInterceptor],
  });
  const temporal = new Client({
    connection,
    namespace: saga.config.temporal.namespace,
    dataConverter: createBookingDataConverter(saga.config),
  });
  const bookings = createBookingApplication({
    config: saga.config,
    database: apiDatabase,
    temporal,
    cipher: saga.cipher,
    timings: saga.timings,
    taskQueues: saga.taskQueueNames,
  });
  server = await startServer(
    buildApp({ database: apiDatabase, cipher: saga.cipher, operationGuard: issuer.operationGuard, bookings }),
  );
});

afterAll(async () => {
  await server?.close();
  await connection?.close();
  await apiDatabase?.destroy();
  await saga?.stop();
});

function create(seatNumber: string) {
  return fetch(`${server.baseUrl}/v1/bookings`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify({
      trip_id: trip.tripId,
      passengers: [
        {
          first_name: 'Ana',
          last_name: 'Silva',
          email: 'ana@example.com',
          seat_number: seatNumber,
          fare_class: 'STANDARD',
        },
      ],
      contact_email: 'ana@example.com',
    }),
  });
}

/** The booking's row, written by the workflow's hold: once it exists the create has nothing left to do. */
async function untilBookingRow(response: Response): Promise<void> {
  const { id } = (await response.json()) as { id: string };
  await eventually(
    () => saga.database('bookings').where({ id }).first('id'),
    (row) => row !== undefined,
    { intervalMs: 50 },
  );
}

test('one create with an Idempotency-Key: the five PostgreSQL statements and one Temporal call docs/design.md names', async () => {
  // A first create warms the pools and caches, so the counted one pays only for itself.
  const warmUp = await create(trip.seatNumbers[0]);
  expect(warmUp.status).toBe(201);
  await untilBookingRow(warmUp);
  statements.length = 0;
  temporalCalls.length = 0;

  const counted = await create(trip.seatNumbers[1]);
  expect(counted.status).toBe(201);
  // Whatever the create leaves running after its answer counts too.
  await untilBookingRow(counted);

  const shortened = statements.map((sql) => sql.replace(/\s+/g, ' ').trim().slice(0, 100));
  process.stdout.write(
    [
      `PostgreSQL statements: ${statements.length}`,
      ...shortened.map((sql) => `  ${sql}`),
      `Temporal calls: ${temporalCalls.length}`,
      ...temporalCalls.map((method) => `  ${method}`),
      '',
    ].join('\n'),
  );
  // The key, the account and the trip at once (in either order), the slot, the stored answer.
  const [key, ...rest] = shortened;
  const atOnce = rest.slice(0, 2).sort();
  expect([key, ...atOnce, ...rest.slice(2)]).toEqual([
    expect.stringMatching(/^INSERT INTO idempotency_keys /),
    expect.stringMatching(/^select "id" from "users" /),
    expect.stringMatching(/^select "trips"\."id", /),
    expect.stringMatching(/^SELECT .* FROM claim_booking_hold\(/),
    expect.stringMatching(/^update "idempotency_keys" set /),
  ]);
  expect(temporalCalls).toEqual(['ExecuteMultiOperation']);
});
