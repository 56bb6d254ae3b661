// Wiring: every activity is served by exactly one task queue, and dependencies follow the notification config.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import {
  activitiesForTaskQueue,
  activityNamesByTaskQueue,
  createActivities,
  createActivityDependencies,
  type ActivityDependencies,
} from '../../../src/activities/index';
import type { BookingActivities } from '../../../src/activities/interface';
import { ConfigError, loadConfig } from '../../../src/config';
import { taskQueues } from '../../../src/domain/task-queues';

const silentLogger = pino({ level: 'silent' });

const environment = {
  DATABASE_URL: 'postgres://bookings:secret@127.0.0.1:1/bookings',
  ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: randomBytes(32).toString('base64'),
};

function unusedDependencies(): ActivityDependencies {
  const unused = () => {
    throw new Error('not used by wiring tests');
  };
  return {
    database: unused as never,
    cipher: unused as never,
    paymentGateway: {
      charge: unused,
      chargeMadeWith: unused,
      refund: unused,
      paymentIntent: unused,
      cancelPayment: unused,
      recentPayments: unused,
    },
    emailSender: { send: unused },
    smsSender: { send: unused },
    webhookSender: { send: unused },
    lapsedHoldGraceSeconds: 60,
  };
}

describe('activitiesForTaskQueue', () => {
  const activities = createActivities(unusedDependencies());

  it('gives each queue its family, every activity to one queue, and the local seat steps also to the workflow queue', () => {
    expect(Object.keys(activitiesForTaskQueue(activities, taskQueues.seats)).sort()).toEqual([
      'ConfirmSeats',
      'ReleaseSeats',
      'ReserveSeats',
    ]);
    // The payment reconciliation asks the processor as the charges do.
    expect(Object.keys(activitiesForTaskQueue(activities, taskQueues.payments)).sort()).toEqual([
      'CancelPayment',
      'CheckPayment',
      'ProcessPayment',
      'ReconcilePayments',
      'RefundPayment',
      'ReportPaymentIncident',
    ]);
    expect(Object.keys(activitiesForTaskQueue(activities, taskQueues.notifications)).sort()).toEqual([
      'SendEmailNotification',
      'SendSMSNotification',
    ]);
    // The seat hold of a new booking, seat confirmations and ticket issuance are local activities, run by the
    // workflow's worker; the trip-cancellation workflow's scan and per-booking cancels run beside it, and so do
    // the partner webhook deliveries.
    expect(Object.keys(activitiesForTaskQueue(activities, taskQueues.bookings)).sort()).toEqual([
      'CancelTripBooking',
      'ConfirmSeats',
      'CountOpenTripBookings',
      'DeliverWebhook',
      'IssueTickets',
      'ListOpenTripBookings',
      'NextWebhookDelivery',
      'RecordBooking',
      'ReserveSeats',
    ]);

    const assigned = Object.values(taskQueues).flatMap((queue) =>
      Object.keys(activitiesForTaskQueue(activities, queue)),
    );
    expect(assigned.sort()).toEqual([...Object.keys(activities), 'ConfirmSeats', 'ReserveSeats'].sort());
    expect(Object.keys(activityNamesByTaskQueue).sort()).toEqual(Object.values(taskQueues).sort());
  });

  it('hands out the very functions createActivities built', () => {
    const handedOut = new Map(Object.entries(activitiesForTaskQueue(activities, taskQueues.seats)));
    const built = new Map(Object.entries(activities));
    expect(handedOut.get('ReserveSeats')).toBe(built.get('ReserveSeats'));
  });

  it('refuses an unknown queue', () => {
    expect(() => activitiesForTaskQueue({} as BookingActivities, 'booking-everything')).toThrow(
      'unknown task queue booking-everything',
    );
  });
});

describe('createActivityDependencies', () => {
  it('writes notifications to the configured outbox by default', async () => {
    const outboxDirectory = await mkdtemp(path.join(os.tmpdir(), 'dependencies-outbox-'));
    const config = loadConfig({ ...environment, NOTIFICATIONS_OUTBOX_DIR: outboxDirectory });
    expect(config.notifications.transport).toBe('outbox');
    const dependencies = createActivityDependencies(config, silentLogger);
    try {
      await dependencies.smsSender.send({ to: '+351912345678', text: 'Hello', idempotencyKey: 'key-1' });
      expect(await readdir(path.join(outboxDirectory, 'sms'))).toEqual(['key-1.json']);
      expect(dependencies.lapsedHoldGraceSeconds).toBe(60);
    } finally {
      await dependencies.close();
      await rm(outboxDirectory, { recursive: true, force: true });
    }
  });

  it('charges through Stripe, at STRIPE_API_URL with STRIPE_SECRET_KEY, when PAYMENT_GATEWAY is stripe', async () => {
    const seen: { path: string | undefined; authorization: string | undefined }[] = [];
    const stripeStub = http.createServer((request, answer) => {
      seen.push({ path: request.url, authorization: request.headers.authorization });
      answer.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'pi_wired',
          object: 'payment_intent',
          status: 'canceled',
          amount: 100,
          currency: 'eur',
          metadata: {},
        }),
      );
    });
    stripeStub.listen(0, '127.0.0.1');
    await once(stripeStub, 'listening');
    const config = loadConfig({
      ...environment,
      PAYMENT_GATEWAY: 'stripe',
      STRIPE_SECRET_KEY: 'sk_test_wiring',
      STRIPE_WEBHOOK_SECRET: 'whsec_wiring',
      STRIPE_API_URL: `http://127.0.0.1:${(stripeStub.address() as AddressInfo).port}`,
    });
    const dependencies = createActivityDependencies(config, silentLogger);
    try {
      await expect(dependencies.paymentGateway.paymentIntent('pi_wired')).resolves.toEqual({
        status: 'canceled',
        intentId: 'pi_wired',
      });
      expect(seen).toEqual([
        {
          path: '/v1/payment_intents/pi_wired?expand[0]=payment_method',
          authorization: 'Bearer sk_test_wiring',
        },
      ]);
    } finally {
      await dependencies.close();
      stripeStub.close();
    }
  });

  it('selects SMTP and the HTTP SMS provider, which then need their settings', async () => {
    const external = { ...environment, NOTIFICATIONS_TRANSPORT: 'smtp+http' };
    expect(() => loadConfig(external)).toThrow(
      new ConfigError('SMS_PROVIDER_URL', 'is required when NOTIFICATIONS_TRANSPORT is smtp+http'),
    );
    expect(() =>
      loadConfig({ ...external, SMS_PROVIDER_URL: 'https://sms.example.com/v1/messages' }),
    ).toThrow(ConfigError);
    const config = loadConfig({
      ...external,
      SMS_PROVIDER_URL: 'https://sms.example.com/v1/messages',
      SMS_PROVIDER_API_KEY: 'key',
      SMTP_HOST: 'smtp.example.com',
      SMTP_PORT: '465',
      SMTP_SECURE: 'true',
      SMTP_USER: 'mailer',
      SMTP_PASSWORD: 'secret',
      BOOKING_LAPSED_HOLD_GRACE_SECONDS: '0',
    });
    expect(config.notifications).toMatchObject({
      transport: 'smtp+http',
      smtp: { host: 'smtp.example.com', port: 465, secure: true, user: 'mailer', password: 'secret' },
      sms: { providerUrl: 'https://sms.example.com/v1/messages', apiKey: 'key', timeoutMs: 10_000 },
    });
    const dependencies = createActivityDependencies(config, silentLogger);
    expect(dependencies.lapsedHoldGraceSeconds).toBe(0);
    await dependencies.close();
    expect(() => loadConfig({ ...environment, NOTIFICATIONS_TRANSPORT: 'pigeon' })).toThrow(
      'NOTIFICATIONS_TRANSPORT must be one of outbox, smtp+http',
    );
  });
});
