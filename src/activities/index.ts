// Builds the booking activities from their dependencies, and picks the subset each task queue's worker serves.
import path from 'node:path';
import type { Knex } from 'knex';
import type { Config } from '../config';
import { taskQueues } from '../domain/task-queues';
import type { Registry } from 'prom-client';
import { countOverduePendingPayments } from '../db/booking-read-model';
import { createDatabase } from '../db/connection';
import type { Logger } from '../logger';
import { createBusinessMetrics, type BusinessMetrics } from '../observability/metrics';
import { createHttpSmsSender } from '../adapters/http-sms-sender';
import { createOutboxEmailSender, createOutboxSmsSender } from '../adapters/outbox-senders';
import { createPaymentGatewaySimulator } from '../adapters/payment-gateway-simulator';
import { createPaymentSimulatorLedger } from '../db/payment-simulator-ledger';
import { createStripePaymentGateway } from '../adapters/stripe-payment-gateway';
import { createSmtpEmailSender } from '../adapters/smtp-email-sender';
import type { EmailSender, SmsSender } from '../ports/notification-senders';
import type { PaymentGateway } from '../ports/payment-gateway';
import { projectRoot } from '../project-root';
import { createFieldCipherFromConfig } from '../security/field-cipher-from-config';
import type { FieldCipher } from '../security/field-encryption';
import type { BookingActivities } from './interface';
import { createNotificationActivities } from './notifications';
import { createPaymentActivities } from './payments';
import { createReadModelActivities } from './read-model';
import { createSeatActivities } from './seats';
import { createTicketActivities } from './tickets';
import { readTicketDocuments, renderTicketDocuments } from '../tickets/ticket-documents';
import { createTicketKeyStore } from '../db/ticket-keys';
import type { SigningKeyStore } from '../db/signing-key-store';
import { createTripCancellationActivities } from './trip-cancellation';
import { createPaymentReconciliationActivities } from './payment-reconciliation';
import { createReconciliationMetrics, type ReconciliationMetrics } from '../observability/payment-metrics';
import {
  createPartnerWebhookMetrics,
  type PartnerWebhookMetrics,
} from '../observability/partner-webhook-metrics';
import { createWebhookSender } from '../adapters/webhook-sender';
import type { WebhookDeliveryStarter, WebhookSender } from '../ports/webhooks';
import { createPartnerWebhookActivities } from './partner-webhooks';

export interface ActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
  paymentGateway: PaymentGateway;
  emailSender: EmailSender;
  smsSender: SmsSender;
  /** See SeatActivityDependencies; Config's booking.lapsedHoldGraceSeconds. */
  lapsedHoldGraceSeconds: number;
  /** Where the activities count the facts they make happen; an unexported registry's when absent. */
  metrics?: BusinessMetrics;
  /** The ticket signing keys; the store in `database` under the default policy when absent. */
  ticketKeys?: SigningKeyStore;
  /** Where the payment reconciliation counts what it mends; an unexported registry's when absent. */
  reconciliationMetrics?: ReconciliationMetrics;
  /** Sends partner webhooks through the outbound guard. */
  webhookSender: WebhookSender;
  /** Wakes the delivery workflows of the partner events a write records; the sweep does it when absent. */
  webhookDeliveries?: WebhookDeliveryStarter;
  partnerWebhookMetrics?: PartnerWebhookMetrics;
  logger?: Logger;
}

export interface OwnedActivityDependencies extends ActivityDependencies {
  /** Closes the database pool and the SMTP connections. */
  close(): Promise<void>;
}

export function createActivities(activityDependencies: ActivityDependencies): BookingActivities {
  // One set of counters for all of them, so each fact lands once in the process's registry.
  const dependencies = {
    ...activityDependencies,
    metrics: activityDependencies.metrics ?? createBusinessMetrics(),
  };
  return {
    ...createSeatActivities(dependencies),
    ...createPaymentActivities(dependencies),
    ...createNotificationActivities({
      ...dependencies,
      ticketAttachments: async (bookingId) => {
        const documents = await readTicketDocuments(dependencies.database, dependencies.cipher, bookingId);
        const rendered = await renderTicketDocuments(documents);
        return rendered.map(({ fileName, content }) => ({
          fileName,
          content,
          contentType: 'application/pdf',
        }));
      },
    }),
    ...createReadModelActivities(dependencies),
    ...createPartnerWebhookActivities(dependencies),
    ...createTicketActivities({
      database: dependencies.database,
      ticketKeys:
        dependencies.ticketKeys ??
        createTicketKeyStore({ database: dependencies.database, cipher: dependencies.cipher }),
    }),
    ...createTripCancellationActivities(dependencies),
    ...createPaymentReconciliationActivities(dependencies),
  };
}

export type TaskQueue = (typeof taskQueues)[keyof typeof taskQueues];

/** Which activities each queue's workers register; the workflow proxies each family on its queue. */
export const activityNamesByTaskQueue = {
  // ReserveSeats and ConfirmSeats run here too, as local activities of the workflow's own worker.
  // The trip-cancellation workflow's scan and per-booking cancels run beside it, on the workflow queue.
  [taskQueues.bookings]: [
    'RecordBooking',
    'ReserveSeats',
    'ConfirmSeats',
    'IssueTickets',
    'CountOpenTripBookings',
    'ListOpenTripBookings',
    'CancelTripBooking',
    'NextWebhookDelivery',
    'DeliverWebhook',
  ],
  [taskQueues.seats]: ['ReserveSeats', 'ConfirmSeats', 'ReleaseSeats'],
  // The reconciliation asks the processor too, so it runs where the charges do.
  [taskQueues.payments]: [
    'ProcessPayment',
    'RefundPayment',
    'CheckPayment',
    'CancelPayment',
    'ReportPaymentIncident',
    'ReconcilePayments',
  ],
  [taskQueues.notifications]: ['SendEmailNotification', 'SendSMSNotification'],
} as const satisfies Record<TaskQueue, readonly (keyof BookingActivities)[]>;

export function activitiesForTaskQueue(
  activities: BookingActivities,
  queue: string,
): Partial<BookingActivities> {
  if (!Object.hasOwn(activityNamesByTaskQueue, queue)) throw new RangeError(`unknown task queue ${queue}`);
  const names: readonly (keyof BookingActivities)[] = activityNamesByTaskQueue[queue as TaskQueue];
  return Object.fromEntries(names.map((name) => [name, activities[name]] as const));
}

/** PAYMENT_GATEWAY: the simulator on this database's ledger, or Stripe (its own API, or STRIPE_API_URL's). */
function paymentGateway(config: Config, database: Knex, logger: Logger): PaymentGateway {
  const payments = config.payments;
  if (payments.gateway === 'simulator') {
    return createPaymentGatewaySimulator(createPaymentSimulatorLedger(database));
  }
  const { secretKey, apiUrl } = payments.stripe;
  logger.info(
    {
      paymentGateway: 'stripe',
      stripeApi: apiUrl ?? 'https://api.stripe.com',
      testMode: secretKey.startsWith('sk_test_'),
    },
    'payments go to Stripe',
  );
  return createStripePaymentGateway({ secretKey, ...(apiUrl !== undefined ? { apiUrl } : {}) });
}

function senders(config: Config, logger: Logger): { email: EmailSender; sms: SmsSender; close(): void } {
  const notifications = config.notifications;
  if (notifications.transport === 'outbox') {
    const directory = path.resolve(projectRoot, notifications.outboxDirectory);
    logger.info({ outboxDirectory: directory }, 'notifications go to the local outbox');
    return {
      email: createOutboxEmailSender({ directory, from: notifications.emailFrom }),
      sms: createOutboxSmsSender({ directory }),
      close: () => {},
    };
  }
  const email = createSmtpEmailSender({ ...notifications.smtp, from: notifications.emailFrom });
  logger.info(
    { smtpHost: notifications.smtp.host, smtpPort: notifications.smtp.port },
    'notifications go to SMTP and the HTTP SMS provider',
  );
  return {
    email,
    sms: createHttpSmsSender({
      url: notifications.sms.providerUrl!,
      apiKey: notifications.sms.apiKey,
      timeoutMs: notifications.sms.timeoutMs,
    }),
    close: () => email.close(),
  };
}

/**
 * The real dependencies from configuration: PostgreSQL, the field cipher, the payment gateway, the senders, and
 * the business counters in `metricsRegistry` (the worker's /metrics), with the gauge of overdue unpaid bookings.
 */
export function createActivityDependencies(
  config: Config,
  logger: Logger,
  metricsRegistry?: Registry,
): OwnedActivityDependencies {
  const cipher = createFieldCipherFromConfig(config);
  const database = createDatabase(config.database.url, {
    poolSize: config.database.poolSize,
    applicationName: 'bookings-activities',
  });
  const notificationSenders = senders(config, logger);
  return {
    database,
    cipher,
    paymentGateway: paymentGateway(config, database, logger),
    emailSender: notificationSenders.email,
    smsSender: notificationSenders.sms,
    lapsedHoldGraceSeconds: config.booking.lapsedHoldGraceSeconds,
    metrics: createBusinessMetrics(metricsRegistry, {
      overduePendingPayments: () =>
        countOverduePendingPayments(database, config.booking.lapsedHoldGraceSeconds),
      onCollectFailure: (error) => logger.warn({ err: error }, 'counting overdue unpaid bookings failed'),
    }),
    reconciliationMetrics: createReconciliationMetrics(metricsRegistry),
    webhookSender: createWebhookSender({ allowList: config.webhooks.allowList }),
    partnerWebhookMetrics: createPartnerWebhookMetrics(metricsRegistry),
    logger,
    async close() {
      notificationSenders.close();
      await database.destroy();
    },
  };
}

export type { BookingActivities } from './interface';
