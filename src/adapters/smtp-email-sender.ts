// EmailSender over SMTP with nodemailer: host, port, TLS and credentials from configuration.
import { createHash } from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { mailAttachments, PermanentDeliveryError, type EmailSender } from '../ports/notification-senders';

export interface SmtpEmailSenderOptions {
  host: string;
  port: number;
  /** true: TLS from the first byte (port 465); false: STARTTLS when the server offers it (587, 25). */
  secure: boolean;
  /** Empty: no authentication. */
  user: string;
  password: string;
  /** e.g. `Bus Bookings <no-reply@bookings.example>`. */
  from: string;
  /** Connection, greeting and socket inactivity limit. */
  timeoutMs: number;
}

export interface SmtpEmailSender extends EmailSender {
  close(): void;
}

interface SmtpError {
  code?: string;
  responseCode?: number;
}

function messageIdDomain(from: string): string {
  const [sender] = addressparser(from, { flatten: true });
  const domain = sender?.address.split('@')[1];
  return domain && domain.length > 0 ? domain : 'bookings.invalid';
}

/**
 * SMTP's own rule: 5xx replies are permanent, 4xx and connection problems transient. Messages name the reply
 * code only: the server's text can quote the recipient's address.
 */
function deliveryError(error: unknown): Error {
  const { code, responseCode } = (typeof error === 'object' && error !== null ? error : {}) as SmtpError;
  if (typeof responseCode === 'number' && responseCode >= 500) {
    return new PermanentDeliveryError(
      `SMTP server refused the message (${responseCode}${code ? ` ${code}` : ''})`,
    );
  }
  const detail = typeof responseCode === 'number' ? `${responseCode}` : (code ?? 'unknown error');
  return new Error(`SMTP delivery failed (${detail})`, { cause: error });
}

export function createSmtpEmailSender(options: SmtpEmailSenderOptions): SmtpEmailSender {
  const transport: Transporter<SMTPTransport.SentMessageInfo> = nodemailer.createTransport({
    host: options.host,
    port: options.port,
    secure: options.secure,
    ...(options.user ? { auth: { user: options.user, pass: options.password } } : {}),
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  const domain = messageIdDomain(options.from);

  return {
    async send(message) {
      // The Message-ID follows from the idempotency key, so a resent copy is recognisably the same message.
      const messageId = `<${createHash('sha256').update(message.idempotencyKey).digest('hex').slice(0, 32)}@${domain}>`;
      try {
        const info = await transport.sendMail({
          from: options.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          ...(message.attachments === undefined ? {} : { attachments: mailAttachments(message.attachments) }),
          messageId,
          headers: { 'X-Idempotency-Key': message.idempotencyKey },
        });
        return { providerMessageId: info.messageId };
      } catch (error) {
        throw deliveryError(error);
      }
    },
    close() {
      transport.close();
    },
  };
}
