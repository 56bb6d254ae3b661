// Workflows cached together in one worker share the interceptors' async context, and each keeps its own spans and request ids.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { requestIdFromHeaders, runWithRequestId } from '../../../src/observability/request-context';
import { temporalClientInterceptors } from '../../../src/observability/tracing-temporal';
import { bookingWorkflowBundleOptions } from '../../../src/worker/workflow-bundle';
import { finishSignal, touchUpdate } from '../../support/async-context-probe-workflow';
import { eventually } from '../../support/outcomes';

// One webpack bundle on two busy cores.
jest.setTimeout(240_000);

/**
 * Node keeps one slot per enabled AsyncLocalStorage on each promise made while it is enabled, so the slots on a
 * new promise count the storages in use in this thread, where the worker runs its workflows (debug mode).
 */
function asyncContextSlotsPerPromise(): number {
  return Object.getOwnPropertySymbols(Promise.resolve()).filter(
    (symbol) => symbol.description === 'kResourceStore',
  ).length;
}

const taskQueue = `async-context-${randomUUID()}`;
const spans = new InMemorySpanExporter();
const activityRequestIds: (string | undefined)[] = [];
let nativeConnection: NativeConnection;
let connection: Connection;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const address = process.env.TEMPORAL_ADDRESS ?? '';
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../support/async-context-probe-workflow'),
    logger: new DefaultLogger('ERROR'),
    ...bookingWorkflowBundleOptions,
  });
  nativeConnection = await NativeConnection.connect({ address });
  worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowBundle,
    // Workflows run in this thread, where the test can see the storages they use; the V8 context is reused as in production.
    debugMode: true,
    reuseV8Context: true,
    activities: { probeActivity: () => Promise.resolve() },
    interceptors: {
      activity: [
        () => ({
          inbound: {
            execute: (input, next) => {
              activityRequestIds.push(requestIdFromHeaders(input.headers));
              return next(input);
            },
          },
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(new SimpleSpanProcessor(spans), new Resource({})) },
  });
  running = worker.run();
  connection = await Connection.connect({ address });
  client = new Client({ connection, interceptors: { workflow: temporalClientInterceptors() } });
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
  await nativeConnection?.close();
});

/** Starts a probe and has it handle an update, each as part of a request of its own; the probe stays open. */
async function openProbe(index: number): Promise<string> {
  const workflowId = `probe-${index}-${randomUUID()}`;
  const handle = await runWithRequestId(`start-${index}`, () =>
    client.workflow.start('asyncContextProbe', { taskQueue, workflowId }),
  );
  await runWithRequestId(`update-${index}`, () => handle.executeUpdate(touchUpdate));
  return workflowId;
}

it("caching more workflows adds no async context storage: every workflow of the V8 context shares the interceptors' one", async () => {
  const first = await openProbe(0);
  const slotsWithOneWorkflow = asyncContextSlotsPerPromise();
  const others: string[] = [];
  for (let index = 1; index <= 5; index += 1) others.push(await openProbe(index));
  expect(worker.getStatus().numCachedWorkflows).toBe(6);
  // Per-workflow storages would add two slots per workflow here (the tracing context's and the request id's).
  expect(asyncContextSlotsPerPromise()).toBe(slotsWithOneWorkflow);

  for (const workflowId of [first, ...others])
    await client.workflow.getHandle(workflowId).signal(finishSignal);

  // Sharing the storage keeps each workflow's spans in its own trace, each under its own parent (a run's span ends
  // with the run).
  const runSpanName = 'RunWorkflow:asyncContextProbe';
  const finished = await eventually(
    () => Promise.resolve(spans.getFinishedSpans()),
    (found) => found.filter((span) => span.name === runSpanName).length === 6,
  );
  for (const workflowId of [first, ...others]) {
    const run = finished.find(
      (span) => span.name === runSpanName && span.attributes.workflowId === workflowId,
    );
    expect(run).toBeDefined();
    const inTrace = finished.filter((span) => span.spanContext().traceId === run!.spanContext().traceId);
    expect(inTrace.find((span) => span.name === 'Timer')?.parentSpanId).toBe(run!.spanContext().spanId);
  }
  const updates = finished.filter((span) => span.name === 'HandleUpdate:touch');
  const activityStarts = finished.filter((span) => span.name === 'StartActivity:probeActivity');
  expect(updates).toHaveLength(6);
  expect(activityStarts).toHaveLength(6);
  for (const start of activityStarts) {
    const update = updates.find((span) => span.spanContext().spanId === start.parentSpanId);
    expect(update?.spanContext().traceId).toBe(start.spanContext().traceId);
  }
  // And each update's activity carried that update's request id, not another workflow's.
  expect([...activityRequestIds].sort()).toEqual(
    Array.from({ length: 6 }, (_, index) => `update-${index}`).sort(),
  );
});
