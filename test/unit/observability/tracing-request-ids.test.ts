// The request id and trace ids reach every log line, and travel to the workflow and activities in Temporal headers.
import { Writable } from 'node:stream';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { WorkflowStartUpdateInput, WorkflowStartUpdateWithStartInput } from '@temporalio/client';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { Context as ActivityContext } from '@temporalio/activity';
import { requestIdHeader } from '../../../src/domain/request-correlation';
import { createLogger } from '../../../src/logger';
import {
  correlationActivityInterceptors,
  currentRequestId,
  requestIdClientInterceptor,
  requestIdFromHeaders,
  runWithRequestId,
} from '../../../src/observability/request-context';
import { withClientSpans } from '../../../src/observability/tracing';
import { temporalLoggerFor } from '../../../src/worker/temporal-logger';

const spans = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });

beforeAll(() => provider.register());
afterEach(() => spans.reset());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});

function capturedLines(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: 'info', name: 'unit' }, destination), lines };
}

describe('log lines', () => {
  it('carry request_id inside a request, across awaits, and none outside', async () => {
    const { logger, lines } = capturedLines();
    await runWithRequestId('request-7', async () => {
      await new Promise((resolve) => setImmediate(resolve));
      logger.child({ component: 'child' }).info('inside');
    });
    logger.info('outside');
    expect(lines[0]).toMatchObject({ msg: 'inside', request_id: 'request-7', component: 'child' });
    expect(lines[1]).toMatchObject({ msg: 'outside' });
    expect(lines[1]).not.toHaveProperty('request_id');
  });

  it('carry trace_id and span_id of the active span', () => {
    const { logger, lines } = capturedLines();
    trace.getTracer('unit').startActiveSpan('work', (span) => {
      logger.info('traced');
      span.end();
    });
    const [finished] = spans.getFinishedSpans();
    expect(lines[0]).toMatchObject({
      trace_id: finished?.spanContext().traceId,
      span_id: finished?.spanContext().spanId,
    });
    expect(lines[0]?.trace_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it("from Temporal keep the interceptors' trace ids when tracing is on, and drop them when it is off", () => {
    const { logger, lines } = capturedLines();
    const meta = { trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16), trace_flags: '01', request_id: 'r-1' };
    temporalLoggerFor(logger, { tracing: true }).info('on', meta);
    temporalLoggerFor(logger, { tracing: false }).info('off', meta);
    expect(lines[0]).toMatchObject(meta);
    expect(lines[1]).toMatchObject({ request_id: 'r-1' });
    expect(Object.keys(lines[1] ?? {})).not.toEqual(expect.arrayContaining(['trace_id']));
  });
});

describe('the Temporal client interceptor', () => {
  const interceptor = requestIdClientInterceptor();

  it('puts the current request id in the headers of an update', async () => {
    let sent: Headers | undefined;
    const input = { headers: {}, updateName: 'ConfirmPayment' } as unknown as WorkflowStartUpdateInput;
    await runWithRequestId('pay-1', () =>
      interceptor.startUpdate!(input, (given) => {
        sent = given.headers;
        return Promise.resolve({ updateId: 'u', workflowRunId: 'r' });
      }),
    );
    expect(requestIdFromHeaders(sent ?? {})).toBe('pay-1');
  });

  it('puts it in both the start and the update of an update-with-start', async () => {
    let sent: WorkflowStartUpdateWithStartInput | undefined;
    const input = { workflowStartHeaders: {}, updateHeaders: {} } as WorkflowStartUpdateWithStartInput;
    await runWithRequestId('create-1', () =>
      interceptor.startUpdateWithStart!(input, (given) => {
        sent = given;
        return Promise.resolve({} as never);
      }),
    );
    expect(requestIdFromHeaders(sent?.workflowStartHeaders ?? {})).toBe('create-1');
    expect(requestIdFromHeaders(sent?.updateHeaders ?? {})).toBe('create-1');
  });

  it('adds no header outside a request', async () => {
    let sent: Headers | undefined;
    const input = { headers: {} } as unknown as WorkflowStartUpdateInput;
    await interceptor.startUpdate!(input, (given) => {
      sent = given.headers;
      return Promise.resolve({ updateId: 'u', workflowRunId: 'r' });
    });
    expect(sent).toEqual({});
  });
});

describe('the activity interceptors', () => {
  it('run the activity as part of the request its header names, and log lines after it still carry it', async () => {
    const { inbound, outbound } = correlationActivityInterceptors({} as ActivityContext);
    const headers = { [requestIdHeader]: defaultPayloadConverter.toPayload('cancel-9') };
    let seenInside: string | undefined;
    let traceId: string | undefined;
    await trace.getTracer('unit').startActiveSpan('RunActivity', async (span) => {
      traceId = span.spanContext().traceId;
      await inbound!.execute!({ args: [], headers }, () => {
        seenInside = currentRequestId();
        return Promise.resolve();
      });
      span.end();
    });
    expect(seenInside).toBe('cancel-9');
    // As the SDK's "Activity completed" line is written: after the activity, outside its context.
    const attributes = outbound!.getLogAttributes!({ activityType: 'RefundPayment' }, (given) => given);
    expect(attributes).toMatchObject({
      activityType: 'RefundPayment',
      request_id: 'cancel-9',
      trace_id: traceId,
    });
    expect(attributes.span_id).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('port calls without an HTTP span', () => {
  it('each get a client span, errors marked by name, arguments never recorded', async () => {
    const gateway = {
      charge: (request: { paymentToken: string }) => Promise.resolve({ approved: request.paymentToken }),
      refund: () => Promise.reject(new RangeError('refund of tok_secret failed')),
    };
    const traced = withClientSpans(gateway, 'PaymentGateway', ['charge', 'refund']);
    await expect(traced.charge({ paymentToken: 'tok_visa' })).resolves.toEqual({ approved: 'tok_visa' });
    await expect(traced.refund()).rejects.toThrow(RangeError);
    const finished: ReadableSpan[] = spans.getFinishedSpans();
    expect(finished.map((span) => [span.name, span.status.code])).toEqual([
      ['PaymentGateway.charge', SpanStatusCode.UNSET],
      ['PaymentGateway.refund', SpanStatusCode.ERROR],
    ]);
    expect(JSON.stringify(finished.map((span) => [span.attributes, span.events, span.status]))).not.toMatch(
      /tok_/,
    );
  });
});
