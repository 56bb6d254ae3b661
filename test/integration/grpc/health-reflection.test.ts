// Integration: grpc.health.v1 follows real PostgreSQL and Temporal readiness; reflection alone describes the services.
import { expect } from '@jest/globals';
import { once } from 'node:events';
import path from 'node:path';
import {
  create,
  createFileRegistry,
  fromBinary,
  getOption,
  toJson,
  type FileRegistry,
} from '@bufbuild/protobuf';
import { nestedTypes } from '@bufbuild/protobuf/reflect';
import {
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import {
  credentials,
  loadPackageDefinition,
  makeGenericClientConstructor,
  status,
  type Client,
  type ClientDuplexStream,
  type GrpcObject,
  type MethodDefinition,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Connection } from '@temporalio/client';
import { service as healthServiceDefinition } from 'grpc-health-check';
import type { Knex } from 'knex';
import { healthServiceName } from '../../../src/api/grpc/health';
import { bookingServiceName, type RunningGrpcServer } from '../../../src/api/grpc/server';
import { detailTypeUrls, errorDomain, statusDetailsKey } from '../../../src/api/grpc/status-details';
import { createReadinessCheck } from '../../../src/application/readiness';
import { createDatabase } from '../../../src/db/connection';
import type { BookingStatus } from '../../../src/generated/com/example/bookings/v1/booking';
import { BookingServiceService } from '../../../src/generated/com/example/bookings/v1/booking_service';
import { findFreePort } from '../../support/ports';
import {
  clientFor,
  createTestCertificates,
  failureOf,
  removeTestCertificates,
  startTestServer,
  type PemPair,
  type TestCertificates,
} from '../../support/grpc-server';

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

type ReflectionVersion = 'v1' | 'v1alpha';

/** A reflection answer as proto-loader decodes it (`oneofs: true` names the kind of answer). */
interface ReflectionAnswer {
  readonly messageResponse: string;
  readonly fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  readonly listServicesResponse?: { service: { name: string }[] };
  readonly errorResponse?: { errorCode: number; errorMessage: string };
}

/** One reflection stream, asked one question at a time, as grpcurl uses it. */
interface ReflectionSession {
  ask(request: Record<string, unknown>): Promise<ReflectionAnswer>;
}

const openStreams: ClientDuplexStream<unknown, unknown>[] = [];

function openReflection(version: ReflectionVersion = 'v1'): ReflectionSession {
  const protoRoot = path.resolve(path.dirname(require.resolve('@grpc/reflection')), '..', 'proto');
  const definition = loadSync(`grpc/reflection/${version}/reflection.proto`, {
    includeDirs: [protoRoot],
    oneofs: true,
  });
  const grpcPackage = loadPackageDefinition(definition).grpc as GrpcObject;
  const versionPackage = (grpcPackage.reflection as GrpcObject)[version] as GrpcObject;
  const ServerReflection = versionPackage.ServerReflection as ServiceClientConstructor;
  const client = new ServerReflection(
    `127.0.0.1:${server.port}`,
    channelCredentials(certificates.allowedClient),
  ) as unknown as Client & {
    serverReflectionInfo(options: { deadline: Date }): ClientDuplexStream<unknown, unknown>;
  };
  openClients.push(client);
  const stream = client.serverReflectionInfo({ deadline: new Date(Date.now() + 60_000) });
  openStreams.push(stream);
  return {
    async ask(request) {
      const answer = once(stream, 'data');
      stream.write(request);
      const [response] = (await answer) as [ReflectionAnswer];
      return response;
    },
  };
}

async function listedServices(session: ReflectionSession): Promise<string[]> {
  const answer = await session.ask({ listServices: '*' });
  return answer.listServicesResponse!.service.map((entry) => entry.name);
}

function filesIn(answer: ReflectionAnswer): FileDescriptorProto[] {
  if (answer.errorResponse) {
    throw new Error(
      `reflection answered ${answer.errorResponse.errorCode}: ${answer.errorResponse.errorMessage}`,
    );
  }
  return answer.fileDescriptorResponse!.fileDescriptorProto.map((bytes) =>
    fromBinary(FileDescriptorProtoSchema, bytes),
  );
}

/** The files reflection serves for `symbols`, gathered as grpcurl does: by symbol, then each import left out by name. */
async function filesServedFor(
  session: ReflectionSession,
  symbols: readonly string[],
): Promise<Map<string, FileDescriptorProto>> {
  const files = new Map<string, FileDescriptorProto>();
  const keep = (answer: ReflectionAnswer) => {
    for (const file of filesIn(answer)) files.set(file.name, file);
  };
  for (const symbol of symbols) keep(await session.ask({ fileContainingSymbol: symbol }));
  for (;;) {
    const missing = new Set(
      [...files.values()].flatMap((file) => file.dependency).filter((name) => !files.has(name)),
    );
    if (missing.size === 0) return files;
    for (const name of missing) keep(await session.ask({ fileByFilename: name }));
  }
}

/**
 * Every type reference in `files` (field, request, response, extendee) that is not the fully qualified name (as protoc
 * and buf write them, `.package.Type`) of a message or enum they declare, as `where → name`: grpcurl reports these
 * as "cannot resolve type".
 */
function unresolvedTypeNames(files: Iterable<FileDescriptorProto>): string[] {
  const declared = new Set<string>();
  const references: { where: string; typeName: string }[] = [];
  const fieldsOf = (scope: string, fields: FileDescriptorProto['extension']) => {
    for (const field of fields) {
      const where = `${scope}.${field.name}`.slice(1);
      if (field.typeName) references.push({ where, typeName: field.typeName });
      if (field.extendee) references.push({ where, typeName: field.extendee });
    }
  };
  const walk = (scope: string, message: FileDescriptorProto['messageType'][number]) => {
    const name = `${scope}.${message.name}`;
    declared.add(name);
    for (const nested of message.enumType) declared.add(`${name}.${nested.name}`);
    fieldsOf(name, message.field);
    fieldsOf(name, message.extension);
    for (const nested of message.nestedType) walk(name, nested);
  };
  for (const file of files) {
    const scope = file.package ? `.${file.package}` : '';
    for (const enumeration of file.enumType) declared.add(`${scope}.${enumeration.name}`);
    for (const message of file.messageType) walk(scope, message);
    fieldsOf(scope, file.extension);
    for (const service of file.service) {
      for (const method of service.method) {
        const where = `${scope}.${service.name}.${method.name}`.slice(1);
        references.push({ where, typeName: method.inputType }, { where, typeName: method.outputType });
      }
    }
  }
  return references
    .filter((reference) => !declared.has(reference.typeName))
    .map((reference) => `${reference.where} → ${reference.typeName}`);
}

/**
 * Loads the served files as a client must, with nothing but what reflection gave: building the registry fails on any
 * message, enum, request or response type name that does not resolve.
 */
function registryOf(files: Map<string, FileDescriptorProto>): FileRegistry {
  const ordered: FileDescriptorProto[] = [];
  const placed = new Set<string>();
  const place = (name: string) => {
    if (placed.has(name)) return;
    placed.add(name);
    const file = files.get(name)!;
    file.dependency.forEach(place);
    ordered.push(file);
  };
  for (const name of files.keys()) place(name);
  return createFileRegistry(create(FileDescriptorSetSchema, { file: ordered }));
}

async function describeThroughReflection(symbols: readonly string[], version?: ReflectionVersion) {
  return registryOf(await filesServedFor(openReflection(version), symbols));
}

/** protoc's name for the entry message of a map field: `template_parameters` → `TemplateParametersEntry`. */
function mapEntryName(fieldName: string): string {
  const camelCase = fieldName
    .split('_')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
  return `${camelCase}Entry`;
}

/**
 * Map fields whose entry is not a `<FieldName>Entry` message nested in the field's own message: protobuf-go (and so
 * grpcurl) refuses such a descriptor as "an invalid map: incorrect implicit map entry name".
 */
function misnamedMapEntries(registry: FileRegistry): string[] {
  const problems: string[] = [];
  for (const file of registry.files) {
    for (const type of nestedTypes(file)) {
      if (type.kind !== 'message') continue;
      for (const field of type.fields) {
        if (field.fieldKind !== 'map') continue;
        const expected = `.${type.typeName}.${mapEntryName(field.name)}`;
        if (field.proto.typeName !== expected) {
          problems.push(`${type.typeName}.${field.name} has entry ${field.proto.typeName}, not ${expected}`);
        }
      }
    }
  }
  return problems;
}

/** The kind of method a grpc-js service definition entry declares, as @bufbuild/protobuf names it. */
function methodKindOf(method: { requestStream: boolean; responseStream: boolean }): string {
  if (method.requestStream) return method.responseStream ? 'bidi_streaming' : 'client_streaming';
  return method.responseStream ? 'server_streaming' : 'unary';
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
  for (const stream of openStreams) stream.end();
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

describe('reflection, as grpcurl uses it', () => {
  it('lists BookingService and the health service', async () => {
    expect(await listedServices(openReflection())).toEqual(
      expect.arrayContaining([bookingServiceName, healthServiceName]),
    );
  });

  it('resolves every listed service from reflection alone, with every import and Money across packages', async () => {
    const session = openReflection();
    for (const name of await listedServices(session)) {
      const files = await filesServedFor(session, [name]);
      expect(unresolvedTypeNames(files.values())).toEqual([]);
      expect(registryOf(files).getService(name)?.methods.length).toBeGreaterThan(0);
    }
    const registry = await describeThroughReflection([bookingServiceName]);
    const amount = registry.getMessage('com.example.bookings.v1.PriceLine')?.field.amount;
    expect(amount?.message?.typeName).toBe('com.example.common.v1.Money');
  });

  it('names every map entry as protobuf requires, grpc.health.v1.HealthListResponse.statuses included', async () => {
    const health = await describeThroughReflection([healthServiceName]);
    expect(misnamedMapEntries(health)).toEqual([]);
    const statuses = health.getMessage('grpc.health.v1.HealthListResponse')?.field.statuses;
    expect(statuses?.fieldKind === 'map' && statuses.message?.typeName).toBe(
      'grpc.health.v1.HealthCheckResponse',
    );
    const session = openReflection();
    for (const name of await listedServices(session)) {
      expect(misnamedMapEntries(registryOf(await filesServedFor(session, [name])))).toEqual([]);
    }
  });

  it('describes every method the server implements, with its streaming kind', async () => {
    const implemented = {
      [bookingServiceName]: BookingServiceService,
      [healthServiceName]: healthServiceDefinition,
    };
    for (const [serviceName, definition] of Object.entries(implemented)) {
      const described = (await describeThroughReflection([serviceName])).getService(serviceName)!;
      const methods = Object.values(definition as Record<string, MethodDefinition<unknown, unknown>>).map(
        (method) => ({
          name: method.path.split('/')[2],
          kind: methodKindOf(method),
        }),
      );
      expect(described.methods.map((method) => ({ name: method.name, kind: method.methodKind }))).toEqual(
        expect.arrayContaining(methods),
      );
      expect(described.methods).toHaveLength(methods.length);
    }
  });

  it('resolves every error detail type by symbol and decodes a real error to JSON through reflection alone', async () => {
    const detailTypes = Object.values(detailTypeUrls).map((url) => url.slice(url.lastIndexOf('/') + 1));
    const registry = await describeThroughReflection(['google.rpc.Status', ...detailTypes]);
    for (const type of detailTypes) expect(registry.getMessage(type)?.typeName).toBe(type);

    const failure = await failureOf(
      clientFor(server, certificates).listBookings({ status: 99 as BookingStatus }),
    );
    const trailer = (failure.cause as ServiceError).metadata.get(statusDetailsKey)[0] as Buffer;
    const statusType = registry.getMessage('google.rpc.Status')!;
    expect(toJson(statusType, fromBinary(statusType, trailer), { registry })).toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: [
        { '@type': detailTypeUrls.errorInfo, reason: 'VALIDATION_FAILED', domain: errorDomain },
        {
          '@type': detailTypeUrls.badRequest,
          fieldViolations: [{ field: 'status', description: 'must be a BookingStatus value' }],
        },
      ],
    });
  });

  it('serves the contracts as written: custom options, proto3 optional fields and comments', async () => {
    const registry = await describeThroughReflection([bookingServiceName]);
    const createBooking = registry.getService(bookingServiceName)!.method.createBooking;
    const authorization = registry.getExtension('com.example.common.v1.authorization')!;
    expect(getOption(createBooking, authorization)).toMatchObject({ scopes: ['bookings:write'] });
    const phone = registry.getMessage('com.example.bookings.v1.PassengerInput')!.field.phone;
    expect(phone.proto.proto3Optional).toBe(true);
    const serviceFile = createBooking.parent.file.proto;
    const serviceIndex = serviceFile.service.findIndex((service) => service.name === 'BookingService');
    // Path [6, i] is FileDescriptorProto.service[i]: the comment above `service BookingService`.
    const serviceComment = serviceFile.sourceCodeInfo?.location.find(
      (location) => location.path.join() === `6,${serviceIndex}`,
    )?.leadingComments;
    expect(serviceComment?.trim()).not.toBe('');
    expect(serviceComment).toBeDefined();
  });

  it('answers the same on grpc.reflection.v1alpha, which older clients use', async () => {
    const session = openReflection('v1alpha');
    expect(await listedServices(session)).toEqual(
      expect.arrayContaining([bookingServiceName, healthServiceName]),
    );
    const registry = registryOf(await filesServedFor(session, [bookingServiceName]));
    expect(registry.getService(bookingServiceName)?.methods.length).toBeGreaterThan(0);
  });

  it('answers an unknown symbol with NOT_FOUND in the stream and keeps answering', async () => {
    const session = openReflection();
    const answer = await session.ask({ fileContainingSymbol: 'com.example.bookings.v1.NoSuchMessage' });
    expect(answer.errorResponse).toMatchObject({ errorCode: status.NOT_FOUND });
    expect(await listedServices(session)).toContain(bookingServiceName);
  });
});
