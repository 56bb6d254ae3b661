// Integration: grpc.health.v1 follows real PostgreSQL and Temporal readiness; reflection lists and describes the services.
import path from 'node:path';
import {
  credentials,
  loadPackageDefinition,
  makeGenericClientConstructor,
  type Client,
  type GrpcObject,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Connection } from '@temporalio/client';
import { service as healthServiceDefinition } from 'grpc-health-check';
import type { Knex } from 'knex';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import { createReadinessCheck } from '../../../src/application/readiness';
import { createDatabase } from '../../../src/db/connection';
import { findFreePort } from '../../support/ports';
import {
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type PemPair,
  type TestCertificates,
} from './grpc-fixture';

type HealthClient = Client & {
  check(
    request: { service: string },
    options: { deadline: Date },
    callback: (error: ServiceError | null, response: { status: string }) => void,
  ): void;
};

let certificates: TestCertificates;
let server: RunningGrpcServer;
let liveDatabase: Knex;
let deadDatabase: Knex;
let liveTemporal: Connection;
let deadTemporal: Connection;
const dependencies: { database?: Knex; temporal?: Connection } = {};
const openClients: Client[] = [];

function channelCredentials(identity: PemPair) {
  return credentials.createSsl(certificates.ca, identity.key, identity.cert);
}

function healthClient(identity: PemPair = certificates.allowedClient): HealthClient {
  const Health = makeGenericClientConstructor(healthServiceDefinition, 'grpc.health.v1.Health');
  const client = new Health(
    `127.0.0.1:${server.port}`,
    channelCredentials(identity),
  ) as unknown as HealthClient;
  openClients.push(client);
  return client;
}

function healthOf(client: HealthClient, service: string): Promise<string> {
  return new Promise((resolve, reject) => {
    client.check({ service }, { deadline: new Date(Date.now() + 5000) }, (error, response) =>
      error ? reject(error) : resolve(response.status),
    );
  });
}

function reflectionClient(): Client & { serverReflectionInfo(): NodeJS.ReadWriteStream } {
  const protoRoot = path.resolve(path.dirname(require.resolve('@grpc/reflection')), '..', 'proto');
  const definition = loadSync('grpc/reflection/v1/reflection.proto', { includeDirs: [protoRoot] });
  const grpcPackage = loadPackageDefinition(definition).grpc as GrpcObject;
  const reflectionPackage = (grpcPackage.reflection as GrpcObject).v1 as GrpcObject;
  const ServerReflection = reflectionPackage.ServerReflection as ServiceClientConstructor;
  const client = new ServerReflection(
    `127.0.0.1:${server.port}`,
    channelCredentials(certificates.allowedClient),
  ) as unknown as Client & { serverReflectionInfo(): NodeJS.ReadWriteStream };
  openClients.push(client);
  return client;
}

/** Sends one reflection request on a fresh stream and returns the single answer. */
function reflect(request: Record<string, unknown>): Promise<Record<string, unknown>> {
  const stream = reflectionClient().serverReflectionInfo();
  return new Promise((resolve, reject) => {
    stream.once('data', (response: Record<string, unknown>) => {
      stream.end();
      resolve(response);
    });
    stream.once('error', reject);
    stream.write(request as never);
  });
}

async function statusAfterRefresh(service = ''): Promise<string> {
  await server.health.refresh();
  return healthOf(healthClient(), service);
}

beforeAll(async () => {
  certificates = createTestCertificates();
  const databaseUrl = process.env.DATABASE_URL!;
  liveDatabase = createDatabase(databaseUrl, { poolSize: 1 });
  // Nothing listens on a port just found free: a database and a Temporal frontend that are down.
  const closedPort = await findFreePort();
  deadDatabase = createDatabase(databaseUrl.replace(/:\d+\//, `:${closedPort}/`), { poolSize: 1 });
  liveTemporal = Connection.lazy({ address: process.env.TEMPORAL_ADDRESS! });
  // No retry interceptor: its retry timers would outlive the closed connection and throw after the tests.
  deadTemporal = Connection.lazy({ address: `127.0.0.1:${closedPort}`, interceptors: [] });
  dependencies.database = liveDatabase;
  dependencies.temporal = liveTemporal;
  server = await startTestServer({
    certificates,
    // Reads the dependencies at each check, so a test can take one down and bring it back.
    checkReadiness: () =>
      createReadinessCheck({ database: dependencies.database!, temporal: dependencies.temporal! })(),
    // Long enough that only the tests' explicit refreshes change the status.
    settings: { healthCheckIntervalMs: 600_000 },
  });
});

afterAll(async () => {
  for (const client of openClients) client.close();
  await server?.stop();
  await Promise.allSettled([
    liveDatabase?.destroy(),
    deadDatabase?.destroy(),
    liveTemporal?.close(),
    deadTemporal?.close(),
  ]);
  if (certificates) removeTestCertificates(certificates);
});

describe('health', () => {
  afterEach(() => {
    dependencies.database = liveDatabase;
    dependencies.temporal = liveTemporal;
  });

  it('reports SERVING for the server and BookingService while PostgreSQL and Temporal answer', async () => {
    expect(await statusAfterRefresh('')).toBe('SERVING');
    expect(await healthOf(healthClient(), 'com.example.bookings.v1.BookingService')).toBe('SERVING');
  });

  it('reports NOT_SERVING while PostgreSQL is down, and SERVING again once it is back', async () => {
    dependencies.database = deadDatabase;
    expect(await statusAfterRefresh('')).toBe('NOT_SERVING');
    expect(await healthOf(healthClient(), 'com.example.bookings.v1.BookingService')).toBe('NOT_SERVING');
    dependencies.database = liveDatabase;
    expect(await statusAfterRefresh('')).toBe('SERVING');
  });

  it('reports NOT_SERVING while Temporal is down', async () => {
    dependencies.temporal = deadTemporal;
    expect(await statusAfterRefresh('com.example.bookings.v1.BookingService')).toBe('NOT_SERVING');
  });

  it('answers health checks only to allow-listed clients', async () => {
    await expect(healthOf(healthClient(certificates.unlistedClient), '')).rejects.toMatchObject({ code: 7 });
  });
});

describe('reflection', () => {
  it('lists BookingService and the health service', async () => {
    const response = await reflect({ listServices: '*' });
    const services = (response.listServicesResponse as { service: { name: string }[] }).service.map(
      (entry) => entry.name,
    );
    expect(services).toEqual(
      expect.arrayContaining(['com.example.bookings.v1.BookingService', 'grpc.health.v1.Health']),
    );
  });

  it('describes BookingService with its file and dependencies, as grpcurl describe needs', async () => {
    const response = await reflect({ fileContainingSymbol: 'com.example.bookings.v1.BookingService' });
    const files = (response.fileDescriptorResponse as { fileDescriptorProto: Buffer[] }).fileDescriptorProto;
    expect(files.length).toBeGreaterThan(1);
    const text = Buffer.concat(files).toString('latin1');
    expect(text).toContain('CreateBooking');
    expect(text).toContain('com.example.common.v1');
  });
});
