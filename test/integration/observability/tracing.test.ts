// One trace from REST and gRPC through Temporal into the activities and SQL, and the ids in every log line of the flow.
//
// The compiled entry points run as `npm run api` and `npm run worker` run them, with tracing configured by the
// standard OTEL_* variables only: what is checked is the production wiring (instrumentations registered before
// Koa, pg and gRPC load; interceptors on the client and workers; the workflow span sink; the flush on SIGTERM).
// The spans arrive over OTLP/HTTP at a receiver this test runs, which keeps them in memory.
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import otlpProtobufRoot from '@opentelemetry/otlp-transformer/build/src/generated/root';
import type { Knex } from 'knex';
import {
  BookingServiceClient,
  type GetBookingResponse,
} from '../../../src/generated/com/example/bookings/v1/booking_service';
import { openTestDatabase, testCipher, testSecrets } from '../../support/database';
import {
  compileProject,
  startEntryPoint,
  type CompiledProject,
  type EntryPointProcess,
  type LogLine,
} from '../../support/entry-points';
import { eventually } from '../../support/outcomes';
import { fetchJson } from '../../support/responses';
import { holdExclusive } from '../../support/exclusive';
import { findFreePort } from '../../support/ports';
import { createTrip, restBookingBody, type TestTrip } from '../../support/trips';
import { insertLoginUser, type LoginUser } from '../../support/users';

// The build (tsc over src/) and webpack's workflow bundle in the worker take most of this on two busy cores.
jest.setTimeout(480_000);

const buildTimeoutMs = 300_000;
const startTimeoutMs = 120_000;
const stopTimeoutMs = 30_000;

/** A span as the receiver keeps it: ids in hex, the service that exported it. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  service: string;
  attributes: Record<string, unknown>;
  /** OTLP's status code: 0 unset, 1 OK, 2 error. */
  statusCode: number;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpValue;
}
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: OtlpKeyValue[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}
interface OtlpMessageType {
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: { longs: StringConstructor; bytes: StringConstructor }): OtlpRequest;
}
const exportTraceServiceRequest = (
  otlpProtobufRoot as unknown as {
    opentelemetry: {
      proto: { collector: { trace: { v1: { ExportTraceServiceRequest: OtlpMessageType } } } };
    };
  }
).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const hex = (base64: string | undefined) => Buffer.from(base64 ?? '', 'base64').toString('hex');

function attributesOf(keyValues: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (keyValues ?? []).map(({ key, value }) => [
      key,
      value?.stringValue ?? value?.intValue ?? value?.boolValue ?? value?.doubleValue,
    ]),
  );
}

/** An OTLP/HTTP protobuf traces endpoint on loopback that keeps every span it receives. */
function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const message = exportTraceServiceRequest.toObject(
        exportTraceServiceRequest.decode(Buffer.concat(chunks)),
        { longs: String, bytes: String },
      );
      for (const resourceSpans of message.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              service,
              attributes: attributesOf(span.attributes),
              statusCode: span.status?.code ?? 0,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        spans,
        close: () => new Promise((closed) => server.close(() => closed())),
      });
    });
  });
}

/** Every pino line a process printed. */
function logLinesOf(process: EntryPointProcess): LogLine[] {
  return process
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });
}

let project: CompiledProject | undefined;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let database: Knex;
let customer: LoginUser;
let trip: TestTrip;
let outboxDirectory: string;
let restBaseUrl: string;
let grpcAddress: string;
let api: EntryPointProcess | undefined;
let worker: EntryPointProcess | undefined;
let releaseTaskQueues: (() => void) | undefined;

beforeAll(async () => {
  // Its worker process serves the standard task queues, as does one other suite's: never both at once.
  releaseTaskQueues = await holdExclusive('standard-task-queues');
  database = openTestDatabase({ poolSize: 2, applicationName: 'tracing-tests' });
  [project, receiver, customer, trip] = await Promise.all([
    compileProject({ timeoutMs: buildTimeoutMs }),
    startOtlpReceiver(),
    insertLoginUser(database, testCipher(), { roles: ['customer'] }),
    createTrip(database),
  ]);
  outboxDirectory = mkdtempSync(path.join(os.tmpdir(), 'tracing-outbox-'));
  const [httpPort, grpcPort] = [await findFreePort(), await findFreePort()];
  restBaseUrl = `http://127.0.0.1:${httpPort}`;
  grpcAddress = `127.0.0.1:${grpcPort}`;
  // Only variables of the configuration table (docs/configuration.md). The standard task queues: no other test of a run polls them.
  const environment = {
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    DATABASE_POOL_SIZE: '4',
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? '',
    ...testSecrets,
    IDP_LOGIN_MAX_FAILURES_PER_IP: '100000',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(httpPort),
    HTTP_REQUEST_TIMEOUT_MS: '30000',
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    GRPC_INSECURE: 'true',
    METRICS_PORT: '0',
    WORKER_METRICS_PORT: '0',
    NOTIFICATIONS_OUTBOX_DIR: outboxDirectory,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  };
  // Debug on the worker: the SDK's lines about each activity and the workflow's start are written at debug.
  worker = startEntryPoint(project.entryPoint('worker'), { ...environment, LOG_LEVEL: 'debug' });
  api = startEntryPoint(project.entryPoint('api'), { ...environment, LOG_LEVEL: 'info' });
  await Promise.all([
    worker.waitForLog('booking workers polling', startTimeoutMs),
    api.waitForLog('gRPC API listening', startTimeoutMs),
  ]);
});

afterAll(async () => {
  await Promise.allSettled([api?.kill(), worker?.kill()]);
  project?.remove();
  await receiver?.close();
  if (outboxDirectory !== undefined) rmSync(outboxDirectory, { recursive: true, force: true });
  await database?.destroy();
  releaseTaskQueues?.();
});

/** The caller's own trace: every request of the flow continues it, as a traced client's requests would. */
const traceId = randomBytes(16).toString('hex');
const traceparent = () => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;

async function call<Body>(
  method: string,
  pathname: string,
  options: { token?: string; body?: unknown; requestId?: string } = {},
): Promise<{ status: number; body: Body; requestId: string | null }> {
  const headers: Record<string, string> = { traceparent: traceparent() };
  if (options.requestId !== undefined) headers['x-request-id'] = options.requestId;
  if (options.body !== undefined) headers['idempotency-key'] = randomUUID();
  const answer = await fetchJson<Body>(restBaseUrl, method, pathname, { ...options, headers });
  return { status: answer.status, body: answer.body, requestId: answer.headers.get('x-request-id') };
}

function getBookingOverGrpc(
  token: string,
  bookingId: string,
  requestId: string,
): Promise<GetBookingResponse> {
  const client = new BookingServiceClient(grpcAddress, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  metadata.set('x-request-id', requestId);
  metadata.set('traceparent', traceparent());
  return new Promise((resolve, reject) => {
    client.getBooking({ bookingId }, metadata, (error: ServiceError | null, response: GetBookingResponse) => {
      client.close();
      if (error === null) resolve(response);
      else reject(error);
    });
  });
}

it('follows a create, pay and cancel flow in one trace, and its log lines carry that trace and each request id', async () => {
  const login = await call<{ access_token: string }>('POST', '/api/auth/login', {
    body: { email: customer.email, password: customer.password },
  });
  const token = login.body.access_token;
  const requestIds = {
    create: `create-${randomUUID()}`,
    pay: `pay-${randomUUID()}`,
    cancel: `cancel-${randomUUID()}`,
    read: `read-${randomUUID()}`,
  };

  const created = await call<{ id: string }>('POST', '/v1/bookings', {
    token,
    requestId: requestIds.create,
    body: restBookingBody(trip, trip.seatNumbers[0]),
  });
  // 202 only if the worker took longer than the create's answer deadline; the booking then follows by itself.
  expect([201, 202]).toContain(created.status);
  expect(created.requestId).toBe(requestIds.create);
  const bookingId = created.body.id;
  await eventually(
    () => call<{ status: string }>('GET', `/v1/bookings/${bookingId}`, { token }),
    (answer) => answer.body.status === 'PENDING_PAYMENT',
    { timeoutMs: 60_000 },
  );
  const paid = await call<{ status: string }>('POST', `/v1/bookings/${bookingId}/payment`, {
    token,
    requestId: requestIds.pay,
    body: { payment_token: 'tok_visa' },
  });
  expect([paid.status, paid.body.status]).toEqual([200, 'CONFIRMED']);
  const cancelled = await call<{ status: string }>('PUT', `/v1/bookings/${bookingId}/cancel`, {
    token,
    requestId: requestIds.cancel,
    body: { reason: 'Plans changed' },
  });
  expect([cancelled.status, cancelled.body.status]).toEqual([200, 'CANCELLED']);
  const readOverGrpc = await getBookingOverGrpc(token, bookingId, requestIds.read);
  expect(readOverGrpc.booking?.id).toBe(bookingId);

  // The cancellation's refund and notifications run after the answer; wait for the last activity's line.
  const workflowId = `booking-${bookingId}`;
  const workerLines = () =>
    logLinesOf(worker!).filter((line) => line.workflowId === workflowId && line.msg === 'Activity completed');
  await eventually(
    () => Promise.resolve(workerLines()),
    (lines) =>
      ['ProcessPayment', 'RefundPayment', 'ReleaseSeats'].every((activity) =>
        lines.some((line) => line.activityType === activity),
      ),
    { timeoutMs: 60_000 },
  );
  // SIGTERM: both processes export what they still buffer before they exit.
  const [apiExit, workerExit] = await Promise.all([api!.stop(stopTimeoutMs), worker!.stop(stopTimeoutMs)]);
  expect([apiExit.code, workerExit.code]).toEqual([0, 0]);

  // The spans: one trace, from the HTTP and gRPC servers through Temporal into the activities and SQL.
  const flow = receiver.spans.filter((span) => span.traceId === traceId);
  const byId = new Map(flow.map((span) => [span.spanId, span]));
  const named = (pattern: RegExp) => flow.filter((span) => pattern.test(span.name));
  const ancestorsOf = (span: ReceivedSpan): string[] => {
    const names: string[] = [];
    for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) {
      names.push(parent.name);
    }
    return names;
  };
  const oneNamed = (pattern: RegExp): ReceivedSpan => {
    const [span, ...others] = named(pattern);
    expect([pattern.source, span === undefined, others.length]).toEqual([pattern.source, false, 0]);
    return span;
  };

  const createServer = oneNamed(/^POST \/v1\/bookings$/);
  const payServer = oneNamed(/^POST \/v1\/bookings\/:\w+\/payment$/);
  const cancelServer = oneNamed(/^PUT \/v1\/bookings\/:\w+\/cancel$/);
  for (const server of [createServer, payServer, cancelServer]) {
    expect([server.service, server.attributes['http.route']]).toEqual([
      'bus-booking-api',
      server.name.slice(server.name.indexOf(' ') + 1),
    ]);
  }

  const payUpdate = oneNamed(/^StartWorkflowUpdate:ConfirmPayment$/);
  expect(ancestorsOf(payUpdate)).toContain(payServer.name);
  const payHandler = oneNamed(/^HandleUpdate:ConfirmPayment$/);
  expect(payHandler.service).toBe('bus-booking-worker');
  expect(ancestorsOf(payHandler)).toEqual(expect.arrayContaining([payUpdate.name, payServer.name]));
  const cancelHandler = oneNamed(/^HandleUpdate:CancelBooking$/);
  expect(ancestorsOf(cancelHandler)).toContain(cancelServer.name);
  const run = oneNamed(/^RunWorkflow:/);
  expect(ancestorsOf(run)).toContain(createServer.name);
  // Both waits were overtaken: the hold by the payment, the wait for departure by the cancellation.
  expect(named(/^Timer$/).map((timer) => timer.attributes['temporal.timer.outcome'])).toEqual([
    'cancelled',
    'cancelled',
  ]);
  expect(payHandler.attributes.temporalUpdateId).toEqual(expect.any(String));
  expect([run, payHandler, cancelHandler].map((span) => span.statusCode)).toEqual([1, 1, 1]);

  const charge = oneNamed(/^RunActivity:ProcessPayment$/);
  expect(ancestorsOf(charge)).toEqual(
    expect.arrayContaining(['StartActivity:ProcessPayment', payHandler.name, payServer.name]),
  );
  const gatewayCharge = oneNamed(/^PaymentGateway\.charge$/);
  expect(ancestorsOf(gatewayCharge)[0]).toBe(charge.name);
  const refund = oneNamed(/^RunActivity:RefundPayment$/);
  expect(ancestorsOf(refund)).toEqual(expect.arrayContaining([cancelHandler.name, cancelServer.name]));
  expect(named(/^RunActivity:ReleaseSeats$/).length).toBeGreaterThan(0);

  const workerQueries = flow.filter(
    (span) => span.service === 'bus-booking-worker' && span.attributes['db.system'] === 'postgresql',
  );
  expect(workerQueries.some((query) => ancestorsOf(query).includes(charge.name))).toBe(true);
  expect(workerQueries.some((query) => ancestorsOf(query).includes(refund.name))).toBe(true);
  const apiQueries = flow.filter(
    (span) => span.service === 'bus-booking-api' && span.attributes['db.system'] === 'postgresql',
  );
  expect(apiQueries.some((query) => ancestorsOf(query).includes(createServer.name))).toBe(true);
  // Statement text only: no parameter values, which hold names and emails.
  expect(JSON.stringify(flow.map((span) => span.attributes))).not.toMatch(/ana\.silva|Silva|tok_visa/);

  const grpcServer = oneNamed(/^grpc\.com\.example\.bookings\.v1\.BookingService\/GetBooking$/);
  expect(grpcServer.service).toBe('bus-booking-api');

  // The log lines: each request's own id, and the caller's trace.
  const apiLines = logLinesOf(api!);
  for (const [requestId, path] of [
    [requestIds.create, '/v1/bookings'],
    [requestIds.pay, `/v1/bookings/${bookingId}/payment`],
    [requestIds.cancel, `/v1/bookings/${bookingId}/cancel`],
  ] as const) {
    expect(apiLines.find((line) => line.msg === 'request' && line.path === path)).toMatchObject({
      request_id: requestId,
      trace_id: traceId,
    });
  }
  expect(apiLines.find((line) => line.msg === 'gRPC call' && line.method === 'GetBooking')).toMatchObject({
    request_id: requestIds.read,
    trace_id: traceId,
  });

  const flowWorkerLines = logLinesOf(worker!).filter((line) => line.workflowId === workflowId);
  // The SDK's lifecycle lines ("Workflow started", "Activity started"…) are written outside any handler: they
  // carry the workflow's ids only (see README). Every other line of the workflow names its request and trace.
  const sdkLifecycleLines = /^(Workflow (started|completed)|Activity started)$/;
  const workflowLines = flowWorkerLines.filter(
    (line) => line.activityType === undefined && !sdkLifecycleLines.test(line.msg),
  );
  expect(workflowLines.length).toBeGreaterThanOrEqual(3);
  for (const line of workflowLines) {
    expect([line.msg, line.trace_id, typeof line.request_id]).toEqual([line.msg, traceId, 'string']);
  }
  const requestIdOfUpdate = (update: string) =>
    workflowLines.find((line) => line.msg === 'update handled' && line.update === update)?.request_id;
  expect({
    CreateBooking: requestIdOfUpdate('CreateBooking'),
    ConfirmPayment: requestIdOfUpdate('ConfirmPayment'),
    CancelBooking: requestIdOfUpdate('CancelBooking'),
  }).toEqual({
    CreateBooking: requestIds.create,
    ConfirmPayment: requestIds.pay,
    CancelBooking: requestIds.cancel,
  });

  const activityLines = flowWorkerLines.filter(
    (line) => line.activityType !== undefined && !sdkLifecycleLines.test(line.msg),
  );
  expect(activityLines.length).toBeGreaterThan(3);
  for (const line of activityLines) {
    expect([line.msg, line.activityType, line.trace_id, typeof line.request_id]).toEqual([
      line.msg,
      line.activityType,
      traceId,
      'string',
    ]);
  }
  const requestIdOfActivity = (activityType: string) =>
    activityLines.find((line) => line.activityType === activityType && line.msg === 'Activity completed')
      ?.request_id;
  expect({
    ProcessPayment: requestIdOfActivity('ProcessPayment'),
    RefundPayment: requestIdOfActivity('RefundPayment'),
  }).toEqual({ ProcessPayment: requestIds.pay, RefundPayment: requestIds.cancel });
});
