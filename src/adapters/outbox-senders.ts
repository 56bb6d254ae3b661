// The embedded stack's senders: each message lands as a file under the outbox directory a developer can open.
//
// Layout: <outbox>/email/<idempotency key>.eml (RFC 5322, opens in any mail client) and
// <outbox>/sms/<idempotency key>.json. The files hold the message in clear text, like a local mail catcher;
// the notifications table keeps the encrypted record. Not for production, where SMTP and the SMS provider are used.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type StreamTransport from 'nodemailer/lib/stream-transport';
import { mailAttachments, type EmailSender, type SmsSender } from '../ports/notification-senders';

export interface OutboxSenderOptions {
  /** Absolute directory; created on first use. */
  directory: string;
  /** Sender address written into the emails. */
  from: string;
}

/** Keys look like `<uuid>:send-email:confirmed`; a retry of one key overwrites its own file instead of adding one. */
function fileNameFor(idempotencyKey: string, extension: string): string {
  return `${idempotencyKey.replace(/[^A-Za-z0-9._-]/g, '_')}.${extension}`;
}

/** Write-then-rename, so a reader never sees half a message. */
async function writeAtomically(
  directory: string,
  fileName: string,
  content: string | Buffer,
): Promise<string> {
  await mkdir(directory, { recursive: true });
  const target = path.join(directory, fileName);
  const temporary = `${target}.${process.pid}.partial`;
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, target);
  return target;
}

export function createOutboxEmailSender(options: OutboxSenderOptions): EmailSender {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const directory = path.join(options.directory, 'email');
  return {
    async send(message) {
      const info: StreamTransport.SentMessageInfo = await composer.sendMail({
        from: options.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.attachments === undefined ? {} : { attachments: mailAttachments(message.attachments) }),
        headers: { 'X-Idempotency-Key': message.idempotencyKey },
      });
      const file = await writeAtomically(
        directory,
        fileNameFor(message.idempotencyKey, 'eml'),
        info.message as Buffer,
      );
      return { providerMessageId: `outbox:${file}` };
    },
  };
}

export function createOutboxSmsSender(options: Pick<OutboxSenderOptions, 'directory'>): SmsSender {
  const directory = path.join(options.directory, 'sms');
  return {
    async send(message) {
      const record = {
        to: message.to,
        text: message.text,
        idempotencyKey: message.idempotencyKey,
        writtenAt: new Date().toISOString(),
      };
      const file = await writeAtomically(
        directory,
        fileNameFor(message.idempotencyKey, 'json'),
        `${JSON.stringify(record, null, 2)}\n`,
      );
      return { providerMessageId: `outbox:${file}` };
    },
  };
}
