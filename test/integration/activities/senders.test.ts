// The SMTP and HTTP SMS senders against real servers on loopback: delivery, headers and which failures are permanent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { createHttpSmsSender } from '../../../src/adapters/http-sms-sender';
import { createSmtpEmailSender, type SmtpEmailSender } from '../../../src/adapters/smtp-email-sender';
import { PermanentDeliveryError } from '../../../src/ports/notification-senders';

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}

describe('SMTP email sender', () => {
  const received: { recipients: string[]; data: string }[] = [];
  let server: SMTPServer;
  let port: number;
  const senders: SmtpEmailSender[] = [];

  beforeAll(async () => {
    server = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === 'mailer' && auth.password === 'secret') callback(null, { user: 'mailer' });
        else callback(smtpError('Invalid credentials', 535));
      },
      onRcptTo(address: SMTPServerAddress, _session, callback) {
        if (address.address.endsWith('@unknown.example')) return callback(smtpError('No such user', 550));
        if (address.address.endsWith('@busy.example')) return callback(smtpError('Try again later', 451));
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push({
            recipients: session.envelope.rcptTo.map((recipient) => recipient.address),
            data: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    for (const sender of senders) sender.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function sender(password = 'secret'): SmtpEmailSender {
    const created = createSmtpEmailSender({
      host: '127.0.0.1',
      port,
      secure: false,
      user: 'mailer',
      password,
      from: 'Bus Bookings <no-reply@bookings.example>',
      timeoutMs: 5000,
    });
    senders.push(created);
    return created;
  }

  const message = (to: string, idempotencyKey = 'booking-1:send-email:confirmed') => ({
    to,
    subject: 'Booking 6F1C2A3B confirmed',
    text: 'Your booking is confirmed.',
    idempotencyKey,
  });

  it('authenticates and delivers, with a Message-ID that follows from the idempotency key', async () => {
    const first = await sender().send(message('ana@example.com'));
    const again = await sender().send(message('ana@example.com'));
    expect(first.providerMessageId).toMatch(/^<[0-9a-f]{32}@bookings\.example>$/);
    expect(again.providerMessageId).toBe(first.providerMessageId);

    const delivered = received.at(-1)!;
    expect(delivered.recipients).toEqual(['ana@example.com']);
    expect(delivered.data).toContain('Subject: Booking 6F1C2A3B confirmed');
    expect(delivered.data).toContain('X-Idempotency-Key: booking-1:send-email:confirmed');
    expect(delivered.data).toContain('Your booking is confirmed.');
  });

  it('reports 5xx replies as permanent without quoting the address, 4xx replies as transient', async () => {
    const rejected = await sender()
      .send(message('nobody@unknown.example'))
      .catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(PermanentDeliveryError);
    expect((rejected as Error).message).toMatch(/refused the message \(550/);
    expect((rejected as Error).message).not.toContain('nobody');

    const deferred = await sender()
      .send(message('someone@busy.example'))
      .catch((error: unknown) => error);
    expect(deferred).toBeInstanceOf(Error);
    expect(deferred).not.toBeInstanceOf(PermanentDeliveryError);

    const badLogin = await sender('wrong')
      .send(message('ana@example.com'))
      .catch((error: unknown) => error);
    expect(badLogin).toBeInstanceOf(PermanentDeliveryError);
  });

  it('reports an unreachable server as transient', async () => {
    const unreachable = createSmtpEmailSender({
      host: '127.0.0.1',
      port: 1,
      secure: false,
      user: '',
      password: '',
      from: 'no-reply@bookings.example',
      timeoutMs: 2000,
    });
    senders.push(unreachable);
    const failure = await unreachable.send(message('ana@example.com')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(PermanentDeliveryError);
    expect((failure as Error).message).toMatch(/^SMTP delivery failed/);
  });
});

describe('HTTP SMS sender', () => {
  interface Received {
    headers: http.IncomingHttpHeaders;
    body: unknown;
  }
  const received: Received[] = [];
  /** Status and body the fake provider answers next, or a delay that outlasts the sender's timeout. */
  let nextAnswer: { status: number; body?: string; delayMs?: number } = { status: 201 };
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        const answer = nextAnswer;
        setTimeout(() => {
          response.writeHead(answer.status, { 'content-type': 'application/json' });
          response.end(answer.body ?? '{}');
        }, answer.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const sms = {
    to: '+351912345678',
    text: 'Booking 6F1C2A3B confirmed.',
    idempotencyKey: 'booking-1:send-sms:confirmed',
  };
  const sender = (timeoutMs = 2000) => createHttpSmsSender({ url, apiKey: 'sms-api-key', timeoutMs });

  it('posts JSON with the API key and idempotency key, and returns the provider message id', async () => {
    nextAnswer = { status: 201, body: JSON.stringify({ id: 'SM123' }) };
    await expect(sender().send(sms)).resolves.toEqual({ providerMessageId: 'SM123' });
    const request = received.at(-1)!;
    expect(request.headers['x-api-key']).toBe('sms-api-key');
    expect(request.headers['idempotency-key']).toBe(sms.idempotencyKey);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.body).toEqual({ to: sms.to, text: sms.text, reference: sms.idempotencyKey });
  });

  it.each([
    [400, true],
    [401, true],
    [422, true],
    [429, false],
    [500, false],
    [503, false],
  ])('treats HTTP %i as permanent: %s', async (status, permanent) => {
    nextAnswer = { status, body: '{"error":"nope"}' };
    const failure = await sender()
      .send(sms)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure instanceof PermanentDeliveryError).toBe(permanent);
    expect((failure as Error).message).toContain(`HTTP ${status}`);
  });

  it('gives up after the timeout with a transient error', async () => {
    nextAnswer = { status: 201, delayMs: 1000 };
    const failure = await sender(200)
      .send(sms)
      .catch((error: unknown) => error);
    expect(failure).not.toBeInstanceOf(PermanentDeliveryError);
    expect((failure as Error).message).toBe('SMS provider did not answer within 200 ms');
  });
});
