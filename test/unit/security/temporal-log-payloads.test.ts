// The Temporal SDK's log lines reach the capture without payload data, whatever shape carries them.
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/logger';
import {
  payloadPlaceholder,
  temporalLoggerFor,
  withoutPayloadData,
} from '../../../src/worker/temporal-logger';

const personalJson = Buffer.from(JSON.stringify({ firstName: 'Henriqueta', paymentToken: 'tok_visa' }));
const payload = { metadata: { encoding: Buffer.from('json/plain') }, data: personalJson };

/** A protobuf message as protobufjs builds it: a class instance whose JSON form has base64 bytes. */
class ActivationMessage {
  constructor(readonly jobs: unknown[]) {}

  toJSON() {
    return {
      jobs: [
        {
          initializeWorkflow: {
            arguments: [
              { metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: personalJson.toString('base64') },
            ],
          },
        },
      ],
    };
  }
}

describe('withoutPayloadData', () => {
  it('replaces the data of payloads at any depth and keeps their metadata and the other fields', () => {
    const cleaned = withoutPayloadData({
      workflowId: 'booking-1',
      result: { completed: { result: payload } },
      failure: { details: { payloads: [payload, payload] } },
    });
    expect(cleaned).toEqual({
      workflowId: 'booking-1',
      result: { completed: { result: { metadata: payload.metadata, data: payloadPlaceholder } } },
      failure: {
        details: {
          payloads: [
            { metadata: payload.metadata, data: payloadPlaceholder },
            { metadata: payload.metadata, data: payloadPlaceholder },
          ],
        },
      },
    });
  });

  it('walks protobuf messages in their JSON form, and leaves errors, dates and byte arrays alone', () => {
    const error = new Error('activity failed');
    const at = new Date(0);
    const taskToken = new Uint8Array([1, 2, 3]);
    const cleaned = withoutPayloadData({
      activation: new ActivationMessage([]),
      error,
      at,
      taskToken,
    }) as Record<string, unknown>;
    expect(JSON.stringify(cleaned.activation)).not.toContain(personalJson.toString('base64'));
    expect(JSON.stringify(cleaned.activation)).toContain(payloadPlaceholder);
    expect(cleaned.error).toBe(error);
    expect(cleaned.at).toBe(at);
    expect(cleaned.taskToken).toBe(taskToken);
  });
});

describe('temporalLoggerFor', () => {
  it('writes trace lines through the redacting logger without payload bytes', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = temporalLoggerFor(createLogger({ level: 'trace', name: 'unit' }, sink));
    logger.trace('Got workflow activation', {
      activation: new ActivationMessage([]),
      first_name: 'Henriqueta',
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(payloadPlaceholder);
    expect(lines[0]).not.toContain('Henriqueta');
    expect(lines[0]).not.toContain(personalJson.toString('base64'));
  });
});
