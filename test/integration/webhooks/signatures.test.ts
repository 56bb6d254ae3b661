// Our signatures as a partner checks them: the official Python standardwebhooks package verifies what we send.
import { randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import { createWebhookSender } from '../../../src/adapters/webhook-sender';
import type { WebhookRequest } from '../../../src/ports/webhooks';
import {
  standardWebhooksPython,
  startPythonWebhookReceiver,
  type PythonWebhookReceiver,
} from '../../support/webhook-receiver';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const currentSecret = newSecret();
const previousSecret = newSecret();
const unrelatedSecret = newSecret();

const sender = createWebhookSender({ allowList: ['127.0.0.1'], timeoutMs: 10_000 });

function webhookTo(receiver: PythonWebhookReceiver, id: string, secrets: string[]): WebhookRequest {
  return {
    url: `${receiver.origin}/webhooks`,
    messageId: id,
    timestamp: new Date(),
    payload: JSON.stringify({
      type: 'booking.cancelled',
      timestamp: new Date().toISOString(),
      data: {
        booking_id: id,
        sequence: 3,
        reason: 'Änderung — 払い戻し',
        refund: { amount_minor: 1250, currency: 'EUR' },
      },
    }),
    secrets,
  };
}

describe('the official Python standardwebhooks package', () => {
  let python: string;
  const receivers: PythonWebhookReceiver[] = [];
  const receiverKnowing = async (...secrets: string[]) => {
    const receiver = await startPythonWebhookReceiver(python, secrets);
    receivers.push(receiver);
    return receiver;
  };

  beforeAll(() => {
    python = standardWebhooksPython();
  });

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.stop()));
  });

  it('verifies what the sender signed', async () => {
    const receiver = await receiverKnowing(currentSecret);
    const result = await sender.send(webhookTo(receiver, 'msg_signed', [currentSecret]));
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 204 });
    expect(await receiver.waitForReceived(1)).toEqual([
      { id: 'msg_signed', valid: true, type: 'booking.cancelled', error: null },
    ]);
  });

  it('rejects what was signed with another secret', async () => {
    const receiver = await receiverKnowing(unrelatedSecret);
    const result = await sender.send(webhookTo(receiver, 'msg_wrong_secret', [currentSecret]));
    expect(result).toMatchObject({ outcome: 'failed', statusCode: 400, error: 'HTTP 400' });
    expect(await receiver.waitForReceived(1)).toEqual([
      {
        id: 'msg_wrong_secret',
        valid: false,
        type: 'booking.cancelled',
        error: 'WebhookVerificationError: No matching signature found',
      },
    ]);
  });

  it('verifies a rotation overlap with either secret: the receiver knowing only the old one', async () => {
    const receiver = await receiverKnowing(previousSecret);
    const result = await sender.send(
      webhookTo(receiver, 'msg_rotation_old', [currentSecret, previousSecret]),
    );
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 204 });
    expect(await receiver.waitForReceived(1)).toEqual([
      { id: 'msg_rotation_old', valid: true, type: 'booking.cancelled', error: null },
    ]);
  });

  it('verifies a rotation overlap with either secret: the receiver knowing only the new one', async () => {
    const receiver = await receiverKnowing(currentSecret);
    const result = await sender.send(
      webhookTo(receiver, 'msg_rotation_new', [currentSecret, previousSecret]),
    );
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 204 });
    expect(await receiver.waitForReceived(1)).toEqual([
      { id: 'msg_rotation_new', valid: true, type: 'booking.cancelled', error: null },
    ]);
  });

  it('rejects the overlap signatures at a receiver knowing neither secret', async () => {
    const receiver = await receiverKnowing(unrelatedSecret);
    const result = await sender.send(
      webhookTo(receiver, 'msg_rotation_neither', [currentSecret, previousSecret]),
    );
    expect(result).toMatchObject({ outcome: 'failed', statusCode: 400 });
    expect(await receiver.waitForReceived(1)).toEqual([
      expect.objectContaining({ id: 'msg_rotation_neither', valid: false }),
    ]);
  });

  it('rejects a timestamp outside its five minutes of tolerance', async () => {
    const receiver = await receiverKnowing(currentSecret);
    const stale = {
      ...webhookTo(receiver, 'msg_stale', [currentSecret]),
      timestamp: new Date(Date.now() - 600_000),
    };
    const result = await sender.send(stale);
    expect(result).toMatchObject({ outcome: 'failed', statusCode: 400 });
    expect(await receiver.waitForReceived(1)).toEqual([
      expect.objectContaining({
        id: 'msg_stale',
        valid: false,
        error: 'WebhookVerificationError: Message timestamp too old',
      }),
    ]);
  });
});
