// SendEmailNotification and SendSMSNotification: one delivery per idempotency key, encrypted records, error classes.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import knex from 'knex';
import os from 'node:os';
import path from 'node:path';
import type {
  NotificationActivities,
  SendEmailNotificationInput,
  SendSmsNotificationInput,
} from '../../../src/activities/interface';
import { createNotificationActivities } from '../../../src/activities/notifications';
import { createReadModelActivities } from '../../../src/activities/read-model';
import { createOutboxEmailSender, createOutboxSmsSender } from '../../../src/adapters/outbox-senders';
import { findDomainError } from '../../../src/domain/errors';
import { activityKey } from '../../../src/domain/ids';
import {
  PermanentDeliveryError,
  type EmailMessage,
  type EmailSender,
  type SmsMessage,
  type SmsSender,
} from '../../../src/ports/notification-senders';
import { testDatabaseUrl } from '../../support/database';
import {
  bookingSnapshot,
  failureOf,
  runActivity,
  testPassenger,
  useActivityTestBed,
} from '../../support/activities';

const testBed = useActivityTestBed();
let outboxDirectory: string;
let emailSender: EmailSender;
let smsSender: SmsSender;
let notifications: NotificationActivities;
const sentEmails: EmailMessage[] = [];
const sentSms: SmsMessage[] = [];
/** Failures the next sends throw, in order. */
const upcomingFailures: Error[] = [];

beforeAll(async () => {
  outboxDirectory = await mkdtemp(path.join(os.tmpdir(), 'notification-outbox-'));
  const outboxEmail = createOutboxEmailSender({
    directory: outboxDirectory,
    from: 'Bus Bookings <no-reply@bookings.example>',
  });
  const outboxSms = createOutboxSmsSender({ directory: outboxDirectory });
  emailSender = {
    async send(message) {
      const failure = upcomingFailures.shift();
      if (failure) throw failure;
      sentEmails.push(message);
      return outboxEmail.send(message);
    },
  };
  smsSender = {
    async send(message) {
      const failure = upcomingFailures.shift();
      if (failure) throw failure;
      sentSms.push(message);
      return outboxSms.send(message);
    },
  };
  notifications = createNotificationActivities({
    database: testBed.database,
    cipher: testBed.cipher,
    emailSender,
    smsSender,
  });
});

afterAll(async () => {
  if (outboxDirectory) await rm(outboxDirectory, { recursive: true, force: true });
});

async function recordedBookingId(): Promise<string> {
  const booking = bookingSnapshot(testBed.trip, [testPassenger('1A')]);
  await createReadModelActivities({ database: testBed.database, cipher: testBed.cipher }).RecordBooking(
    booking,
  );
  return booking.id;
}

function confirmationEmail(bookingId: string): SendEmailNotificationInput {
  return {
    bookingId,
    idempotencyKey: activityKey(bookingId, 'send-email', 'confirmed'),
    template: 'booking-confirmed',
    to: 'ana.silva@example.com',
    parameters: {
      departureTime: testBed.trip.departureTime.toISOString(),
      seatNumbers: '1A',
      amountPaidMinor: 2590,
      currency: 'EUR',
    },
  };
}

function cancellationSms(bookingId: string): SendSmsNotificationInput {
  return {
    bookingId,
    idempotencyKey: activityKey(bookingId, 'send-sms', 'cancelled'),
    template: 'booking-cancelled',
    to: '+351912345678',
    parameters: {
      departureTime: testBed.trip.departureTime.toISOString(),
      refundAmountMinor: 1295,
      currency: 'EUR',
    },
  };
}

interface NotificationRow {
  idempotency_key: string;
  recipient: string;
  body: string;
}

async function findNotificationRow(idempotencyKey: string): Promise<NotificationRow | undefined> {
  return testBed
    .database<NotificationRow>('notifications')
    .where({ idempotency_key: idempotencyKey })
    .first();
}

async function notificationRow(idempotencyKey: string): Promise<NotificationRow> {
  const row = await findNotificationRow(idempotencyKey);
  if (row === undefined) throw new Error(`no notification ${idempotencyKey}`);
  return row;
}

describe('SendEmailNotification', () => {
  it('sends once per key, however often and concurrently it is retried, and keeps an encrypted record', async () => {
    const bookingId = await recordedBookingId();
    const input = confirmationEmail(bookingId);
    await Promise.all([1, 2, 3, 4].map(() => runActivity(notifications, 'SendEmailNotification', input)));
    await runActivity(notifications, 'SendEmailNotification', input);

    expect(sentEmails.filter((message) => message.idempotencyKey === input.idempotencyKey)).toHaveLength(1);
    const row = await notificationRow(input.idempotencyKey);
    expect(row).toMatchObject({
      booking_id: bookingId,
      channel: 'EMAIL',
      template: 'booking-confirmed',
      subject: `Booking ${bookingId.slice(0, 8).toUpperCase()} confirmed`,
      status: 'SENT',
      attempts: 1,
    });
    expect(row.recipient).toMatch(/^enc:v1:/);
    expect(row.body).toMatch(/^enc:v1:/);
    expect(testBed.cipher.decrypt(row.recipient)).toBe('ana.silva@example.com');
    expect(testBed.cipher.decrypt(row.body)).toContain('Paid: €25.90');

    const emailFiles = await readdir(path.join(outboxDirectory, 'email'));
    const file = emailFiles.find((name) => name.startsWith(bookingId));
    expect(file).toBe(`${input.idempotencyKey.replace(/:/g, '_')}.eml`);
    const eml = await readFile(path.join(outboxDirectory, 'email', file!), 'utf8');
    expect(eml).toContain('To: ana.silva@example.com');
    // Long header lines are folded onto the next line, as RFC 5322 allows.
    expect(eml).toMatch(new RegExp(`X-Idempotency-Key:\\s+${input.idempotencyKey}`));
  });

  it('reads the tickets it attaches before locking its row, so sends never wait on their own pool', async () => {
    // One connection: a send that held its row's lock while reading its attachments would wait for itself.
    const onePool = knex({
      client: 'pg',
      connection: testDatabaseUrl(),
      pool: { min: 0, max: 1 },
      acquireConnectionTimeout: 3_000,
    });
    try {
      const withTickets = createNotificationActivities({
        database: onePool,
        cipher: testBed.cipher,
        emailSender,
        smsSender,
        ticketAttachments: async (bookingId) => {
          const booking = await onePool('bookings').where({ id: bookingId }).first<{ id: string }>('id');
          return [
            {
              fileName: `ticket-${booking.id}.pdf`,
              contentType: 'application/pdf',
              content: Buffer.from('%PDF'),
            },
          ];
        },
      });
      const bookingId = await recordedBookingId();
      const input = confirmationEmail(bookingId);
      await Promise.all([1, 2, 3].map(() => runActivity(withTickets, 'SendEmailNotification', input)));

      const sent = sentEmails.filter((message) => message.idempotencyKey === input.idempotencyKey);
      expect(sent).toHaveLength(1);
      expect(sent[0].attachments?.map((attachment) => attachment.fileName)).toEqual([
        `ticket-${bookingId}.pdf`,
      ]);
      expect(await notificationRow(input.idempotencyKey)).toMatchObject({ status: 'SENT', attempts: 1 });
    } finally {
      await onePool.destroy();
    }
  });

  it('retries a transient failure and gives up at once on a permanent one', async () => {
    const bookingId = await recordedBookingId();
    const input = confirmationEmail(bookingId);
    upcomingFailures.push(new Error('SMTP delivery failed (421)'));
    const transient = await failureOf(runActivity(notifications, 'SendEmailNotification', input));
    expect(transient).toMatchObject({ type: 'DELIVERY_FAILED', nonRetryable: false });
    expect(await notificationRow(input.idempotencyKey)).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      last_error: 'SMTP delivery failed (421)',
    });
    await runActivity(notifications, 'SendEmailNotification', input);
    expect(await notificationRow(input.idempotencyKey)).toMatchObject({
      status: 'SENT',
      attempts: 2,
      last_error: null,
    });

    const rejected = { ...input, idempotencyKey: activityKey(bookingId, 'send-email', 'cancelled') };
    upcomingFailures.push(new PermanentDeliveryError('SMTP server refused the message (550)'));
    const permanent = await failureOf(runActivity(notifications, 'SendEmailNotification', rejected));
    expect(permanent).toMatchObject({ type: 'DELIVERY_REJECTED', nonRetryable: true });
    expect(await notificationRow(rejected.idempotencyKey)).toMatchObject({ status: 'FAILED', attempts: 1 });
  });

  it('rejects missing template parameters, bad addresses and unknown bookings without sending', async () => {
    const bookingId = await recordedBookingId();
    const sentBefore = sentEmails.length;
    const input = confirmationEmail(bookingId);

    const missing = await failureOf(
      runActivity(notifications, 'SendEmailNotification', { ...input, parameters: { currency: 'EUR' } }),
    );
    expect(missing).toMatchObject({ type: 'VALIDATION_FAILED', nonRetryable: true });
    expect(findDomainError(missing)?.fieldViolations[0].message).toBe(
      'template booking-confirmed needs parameters departureTime, seatNumbers, amountPaidMinor',
    );
    const badAddress = await failureOf(
      runActivity(notifications, 'SendEmailNotification', { ...input, to: 'nobody' }),
    );
    expect(badAddress.type).toBe('VALIDATION_FAILED');

    const orphanId = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
    const orphan = await failureOf(
      runActivity(notifications, 'SendEmailNotification', {
        ...input,
        bookingId: orphanId,
        idempotencyKey: activityKey(orphanId, 'send-email', 'confirmed'),
      }),
    );
    expect(orphan).toMatchObject({ type: 'NOT_FOUND', nonRetryable: true });
    expect(sentEmails.length).toBe(sentBefore);
    expect(await findNotificationRow(input.idempotencyKey)).toBeUndefined();
  });
});

describe('SendSMSNotification', () => {
  it('sends the short text once and leaves a JSON file in the outbox', async () => {
    const bookingId = await recordedBookingId();
    const input = cancellationSms(bookingId);
    await runActivity(notifications, 'SendSMSNotification', input);
    await runActivity(notifications, 'SendSMSNotification', input);

    const sent = sentSms.filter((message) => message.idempotencyKey === input.idempotencyKey);
    expect(sent).toEqual([
      {
        to: '+351912345678',
        idempotencyKey: input.idempotencyKey,
        text: `Booking ${bookingId.slice(0, 8).toUpperCase()} cancelled. Refund: €12.95.`,
      },
    ]);
    expect(await notificationRow(input.idempotencyKey)).toMatchObject({
      channel: 'SMS',
      subject: null,
      status: 'SENT',
    });
    const file = path.join(outboxDirectory, 'sms', `${input.idempotencyKey.replace(/:/g, '_')}.json`);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({
      to: '+351912345678',
      text: sent[0].text,
    });
  });

  it('rejects a phone number that is not E.164', async () => {
    const bookingId = await recordedBookingId();
    const failure = await failureOf(
      runActivity(notifications, 'SendSMSNotification', { ...cancellationSms(bookingId), to: '912345678' }),
    );
    expect(failure).toMatchObject({ type: 'VALIDATION_FAILED', nonRetryable: true });
  });
});
