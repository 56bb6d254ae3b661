// SendEmailNotification and SendSMSNotification: render, record in the notifications table, send at most once.
import type { Knex } from 'knex';
import { notFound, validationFailed, type FieldViolation } from '../domain/errors';
import { isE164Phone, isEmail } from '../domain/validation';
import {
  PermanentDeliveryError,
  type EmailAttachment,
  type EmailSender,
  type SmsSender,
} from '../ports/notification-senders';
import {
  createBusinessMetrics,
  type BusinessMetrics,
  type NotificationChannel,
} from '../observability/metrics';
import type { FieldCipher } from '../security/field-encryption';
import { claimNotification, recordNotificationFailure, recordNotificationSent } from '../db/notifications';
import { isPostgresError, postgresErrorCodes } from '../db/postgres-errors';
import { permanentFailure, transientFailure } from './failures';
import {
  businessFailure,
  type NotificationActivities,
  type NotificationTemplate,
  type SendEmailNotificationInput,
  type SendSmsNotificationInput,
} from './interface';
import {
  NotificationTemplateError,
  renderNotification,
  type RenderedNotification,
} from './notification-templates';

export interface NotificationActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
  emailSender: EmailSender;
  smsSender: SmsSender;
  metrics?: BusinessMetrics;
  /** The booking's valid tickets as PDF files; none attached when absent. */
  ticketAttachments?: (bookingId: string) => Promise<EmailAttachment[]>;
}

/** Emails that carry the booking's tickets: the confirmation, and a change that may have replaced them. */
const templatesWithTickets: readonly NotificationTemplate[] = ['booking-confirmed', 'booking-changed'];

type Channel = 'EMAIL' | 'SMS';

const channelLabels: Readonly<Record<Channel, NotificationChannel>> = { EMAIL: 'email', SMS: 'sms' };

interface NotificationRequest {
  bookingId: string;
  idempotencyKey: string;
  template: NotificationTemplate;
  to: string;
  parameters: Record<string, string | number>;
}

const MAXIMUM_ERROR_LENGTH = 500;

function validate(channel: Channel, input: NotificationRequest): RenderedNotification {
  const violations: FieldViolation[] = [];
  if (typeof input.idempotencyKey !== 'string' || input.idempotencyKey.length === 0) {
    violations.push({ field: 'idempotency_key', message: 'is required' });
  }
  const validRecipient = channel === 'EMAIL' ? isEmail(input.to) : isE164Phone(input.to);
  if (!validRecipient) {
    violations.push({
      field: 'to',
      message: channel === 'EMAIL' ? 'must be an email address' : 'must be E.164',
    });
  }
  if (violations.length > 0) throw businessFailure(validationFailed(violations));
  try {
    return renderNotification(input.template, input.parameters, input.bookingId);
  } catch (error) {
    if (error instanceof NotificationTemplateError) {
      throw businessFailure(validationFailed([{ field: 'parameters', message: error.message }]));
    }
    throw error;
  }
}

type DeliveryOutcome = { delivered: true } | { delivered: false; failure: unknown };

export function createNotificationActivities(
  dependencies: NotificationActivityDependencies,
): NotificationActivities {
  const { database, cipher, emailSender, smsSender } = dependencies;
  const metrics = dependencies.metrics ?? createBusinessMetrics();

  async function attachmentsFor(input: NotificationRequest): Promise<EmailAttachment[]> {
    if (dependencies.ticketAttachments === undefined || !templatesWithTickets.includes(input.template))
      return [];
    return dependencies.ticketAttachments(input.bookingId);
  }

  async function deliver(
    channel: Channel,
    input: NotificationRequest,
    message: RenderedNotification,
    attachments: EmailAttachment[],
  ) {
    if (channel === 'SMS') {
      return smsSender.send({ to: input.to, text: message.smsText, idempotencyKey: input.idempotencyKey });
    }
    return emailSender.send({
      to: input.to,
      subject: message.subject,
      text: message.text,
      idempotencyKey: input.idempotencyKey,
      ...(attachments.length === 0 ? {} : { attachments }),
    });
  }

  /**
   * The row keyed by the idempotency key is locked while sending, so a concurrent retry waits and then finds it
   * SENT; a crash after the provider accepted and before the commit can still resend (providers get the key).
   */
  async function send(channel: Channel, input: NotificationRequest): Promise<void> {
    const message = validate(channel, input);
    // Read and rendered before the row is locked: reading takes connections from the same pool, and sends that
    // each held one while waiting for another would take the whole pool and wait on each other.
    const attachments = channel === 'EMAIL' ? await attachmentsFor(input) : [];
    const outcome = await database
      .transaction(async (transaction): Promise<DeliveryOutcome> => {
        const row = await claimNotification(transaction, {
          bookingId: input.bookingId,
          channel,
          recipient: cipher.encrypt(input.to),
          template: input.template,
          subject: channel === 'EMAIL' ? message.subject : null,
          body: cipher.encrypt(channel === 'EMAIL' ? message.text : message.smsText),
          idempotencyKey: input.idempotencyKey,
        });
        if (row.status === 'SENT') return { delivered: true };
        try {
          await deliver(channel, input, message, attachments);
        } catch (failure) {
          metrics.notification(channelLabels[channel], 'failed');
          await recordNotificationFailure(transaction, row.id, {
            permanent: failure instanceof PermanentDeliveryError,
            error: (failure instanceof Error ? failure.message : String(failure)).slice(
              0,
              MAXIMUM_ERROR_LENGTH,
            ),
          });
          return { delivered: false, failure };
        }
        // Counted as the provider accepts it; a retry finds the row SENT and sends nothing.
        metrics.notification(channelLabels[channel], 'sent');
        await recordNotificationSent(transaction, row.id);
        return { delivered: true };
      })
      .catch((error: unknown) => {
        if (isPostgresError(error, postgresErrorCodes.foreignKeyViolation)) {
          throw businessFailure(notFound('Booking', input.bookingId));
        }
        throw error;
      });
    if (outcome.delivered) return;
    const { failure } = outcome;
    const reason = failure instanceof Error ? failure.message : String(failure);
    throw failure instanceof PermanentDeliveryError
      ? permanentFailure('DELIVERY_REJECTED', reason, failure)
      : transientFailure('DELIVERY_FAILED', reason, failure);
  }

  return {
    SendEmailNotification: (input: SendEmailNotificationInput) => send('EMAIL', input),
    SendSMSNotification: (input: SendSmsNotificationInput) => send('SMS', input),
  };
}
