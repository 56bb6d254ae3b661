// The notification ports: what the notification activities need from an email service and an SMS provider.

export interface EmailAttachment {
  fileName: string;
  contentType: string;
  content: Buffer;
}

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  /** Files sent with the message (a confirmation's PDF tickets). */
  attachments?: readonly EmailAttachment[];
  /** Stable per message, so a provider that deduplicates (or a mailbox that threads by Message-ID) can. */
  idempotencyKey: string;
}

export interface SmsMessage {
  /** E.164, e.g. `+351912345678`. */
  to: string;
  text: string;
  idempotencyKey: string;
}

export interface DeliveryReceipt {
  /** The provider's id for the message, kept for support requests. */
  providerMessageId: string;
}

/** Implemented by the SMTP sender (nodemailer) and the local outbox. */
export interface EmailSender {
  send(message: EmailMessage): Promise<DeliveryReceipt>;
}

/** Implemented by the HTTP SMS-provider sender (Twilio-like) and the local outbox. */
export interface SmsSender {
  send(message: SmsMessage): Promise<DeliveryReceipt>;
}

/**
 * The provider refused the message for good (bad address, rejected credentials, 4xx): retrying cannot help.
 * Any other error a sender throws is taken as transient and retried.
 */
export class PermanentDeliveryError extends Error {
  override name = 'PermanentDeliveryError';
}

/** The attachments as nodemailer takes them. */
export function mailAttachments(
  attachments: readonly EmailAttachment[],
): { filename: string; contentType: string; content: Buffer }[] {
  return attachments.map((attachment) => ({
    filename: attachment.fileName,
    contentType: attachment.contentType,
    content: attachment.content,
  }));
}
