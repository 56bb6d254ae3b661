// The local outbox: readable files per message, one per idempotency key however often it is sent.
import { expect } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createOutboxEmailSender, createOutboxSmsSender } from '../../../src/adapters/outbox-senders';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'outbox-test-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const key = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b:send-email:confirmed';

describe('outbox email sender', () => {
  it('writes an RFC 5322 message named after the idempotency key, once per key', async () => {
    const sender = createOutboxEmailSender({ directory, from: 'Bus Bookings <no-reply@bookings.example>' });
    const message = {
      to: 'ana@example.com',
      subject: 'Booking 6F1C2A3B confirmed',
      text: 'See you on board.',
      idempotencyKey: key,
    };
    const receipt = await sender.send(message);
    await sender.send(message);

    const files = await readdir(path.join(directory, 'email'));
    expect(files).toEqual(['6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b_send-email_confirmed.eml']);
    const file = path.join(directory, 'email', files[0]);
    expect(receipt.providerMessageId).toBe(`outbox:${file}`);
    const eml = await readFile(file, 'utf8');
    expect(eml).toMatch(/^From: Bus Bookings <no-reply@bookings\.example>$/m);
    expect(eml).toMatch(/^To: ana@example\.com$/m);
    expect(eml).toMatch(/^Subject: Booking 6F1C2A3B confirmed$/m);
    expect(eml).toContain('\n\nSee you on board.');
    // Only the owner may read messages holding personal data.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});

describe('outbox SMS sender', () => {
  it('writes one JSON record per key and leaves no partial files', async () => {
    const sender = createOutboxSmsSender({ directory });
    const smsKey = key.replace('send-email', 'send-sms');
    await sender.send({ to: '+351912345678', text: 'first', idempotencyKey: smsKey });
    await sender.send({ to: '+351912345678', text: 'second', idempotencyKey: smsKey });
    await sender.send({ to: '+351912345678', text: 'other', idempotencyKey: 'a/../../escape' });

    const files = (await readdir(path.join(directory, 'sms'))).sort();
    expect(files).toEqual([
      '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b_send-sms_confirmed.json',
      'a_.._.._escape.json',
    ]);
    const record: unknown = JSON.parse(await readFile(path.join(directory, 'sms', files[0]), 'utf8'));
    expect(record).toEqual({
      to: '+351912345678',
      text: 'second',
      idempotencyKey: smsKey,
      writtenAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
  });
});
