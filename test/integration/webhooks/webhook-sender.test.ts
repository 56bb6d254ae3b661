// The webhook sender against loopback receivers it is allowed to reach: what it sends, and how it reads each answer.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { expect } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import type { Connector, Resolver } from '../../../src/adapters/outbound-guard';
import { createWebhookSender } from '../../../src/adapters/webhook-sender';
import type { WebhookRequest } from '../../../src/ports/webhooks';
import { createCertificateAuthority, issueCertificate } from '../../../dev/stack/development-certificates';
import { startLoopbackReceiver, type Answer, type LoopbackReceiver } from '../../support/loopback-receiver';
import { eventually } from '../../support/outcomes';

const secretOf = (text: string) => `whsec_${Buffer.from(text.padEnd(32, '.')).toString('base64')}`;
const currentSecret = secretOf('current secret');
const previousSecret = secretOf('previous secret');

function webhookTo(url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest {
  return {
    url,
    messageId: 'msg_2mD3hbqBdw8bmYGwnNnVUeGbYdZ',
    timestamp: new Date(),
    payload: JSON.stringify({
      type: 'booking.confirmed',
      timestamp: '2026-11-29T08:00:00.000Z',
      data: { booking_id: 'b-1', sequence: 1, note: 'ünïcødé' },
    }),
    secrets: [currentSecret],
    ...overrides,
  };
}

/** Answers by path, as the receivers of each case would. */
const scripted: Answer = (request, response) => {
  switch (request.path) {
    case '/created':
      response.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    case '/gone':
      response.writeHead(410).end();
      return;
    case '/slow-down':
      response.writeHead(429, { 'retry-after': '120' }).end();
      return;
    case '/slow-down-garbled':
      response.writeHead(429, { 'retry-after': 'in a while' }).end();
      return;
    case '/unavailable':
      response.writeHead(503, { 'retry-after': new Date(Date.now() + 90_000).toUTCString() }).end();
      return;
    case '/unavailable-no-hint':
      response.writeHead(503).end();
      return;
    case '/broken':
      response.writeHead(500).end('stack trace the sender must not keep');
      return;
    case '/not-found':
      response.writeHead(404).end();
      return;
    case '/moved':
      response.writeHead(302, { location: '/ok' }).end();
      return;
    case '/moved-for-good':
      response.writeHead(308, { location: '/ok' }).end();
      return;
    case '/big':
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(Buffer.alloc(4 * 1024 * 1024, 'x'));
      return;
    case '/hang':
      return;
    case '/hang-after-status':
      response.writeHead(200);
      response.write('a first part and then nothing');
      return;
    default:
      response.writeHead(204).end();
  }
};

describe('with loopback on the allow-list', () => {
  let receiver: LoopbackReceiver;
  const sender = createWebhookSender({
    allowList: ['127.0.0.1'],
    timeoutMs: 5000,
    userAgent: 'webhook-test/1',
  });

  beforeAll(async () => {
    receiver = await startLoopbackReceiver({ answer: scripted });
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  beforeEach(() => {
    receiver.requests.length = 0;
  });

  it('POSTs the payload with the Standard Webhooks headers, signed so the library verifies it', async () => {
    const request = webhookTo(`${receiver.origin}/hooks?partner=1`);
    const result = await sender.send(request);
    expect(result).toEqual({ outcome: 'delivered', statusCode: 204, durationMs: expect.any(Number) });
    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    expect(received.method).toBe('POST');
    expect(received.path).toBe('/hooks?partner=1');
    expect(received.body).toBe(request.payload);
    expect(received.headers).toMatchObject({
      host: `127.0.0.1:${receiver.port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(request.payload)),
      'user-agent': 'webhook-test/1',
      'webhook-id': request.messageId,
      'webhook-timestamp': String(Math.floor(request.timestamp.getTime() / 1000)),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
    });
    const headers = received.headers as Record<string, string>;
    expect(new Webhook(currentSecret).verify(received.body, headers)).toEqual(JSON.parse(request.payload));
    expect(() => new Webhook(previousSecret).verify(received.body, headers)).toThrow(
      'No matching signature found',
    );
  });

  it('signs with every secret during a rotation, current first, one space apart', async () => {
    const request = webhookTo(`${receiver.origin}/hooks`, { secrets: [currentSecret, previousSecret] });
    await sender.send(request);
    const headers = receiver.requests[0].headers as Record<string, string>;
    expect(headers['webhook-signature']).toBe(
      [currentSecret, previousSecret]
        .map((secret) => new Webhook(secret).sign(request.messageId, request.timestamp, request.payload))
        .join(' '),
    );
    expect(new Webhook(previousSecret).verify(receiver.requests[0].body, headers)).toBeDefined();
  });

  it.each([
    ['/created', { outcome: 'delivered', statusCode: 201 }],
    ['/gone', { outcome: 'gone', statusCode: 410 }],
    ['/slow-down', { outcome: 'failed', statusCode: 429, error: 'HTTP 429', retryAfterSeconds: 120 }],
    [
      '/unavailable',
      { outcome: 'failed', statusCode: 503, error: 'HTTP 503', retryAfterSeconds: expect.any(Number) },
    ],
    ['/broken', { outcome: 'failed', statusCode: 500, error: 'HTTP 500' }],
    ['/not-found', { outcome: 'failed', statusCode: 404, error: 'HTTP 404' }],
    ['/moved', { outcome: 'failed', statusCode: 302, error: 'HTTP 302: redirects are not followed' }],
    [
      '/moved-for-good',
      { outcome: 'failed', statusCode: 308, error: 'HTTP 308: redirects are not followed' },
    ],
  ])('reads the answer of %s', async (pathname, expected) => {
    const result = await sender.send(webhookTo(`${receiver.origin}${pathname}`));
    expect(result).toEqual({ ...expected, durationMs: expect.any(Number) });
    // Once: a redirect is not followed, and nothing is retried within an attempt.
    expect(receiver.requests.map((request) => request.path)).toEqual([pathname]);
  });

  it('takes an HTTP-date Retry-After as the seconds until it', async () => {
    const result = await sender.send(webhookTo(`${receiver.origin}/unavailable`));
    expect(result).toMatchObject({ outcome: 'failed', statusCode: 503 });
    const { retryAfterSeconds } = result as { retryAfterSeconds: number };
    // toUTCString drops the milliseconds, so the date is up to a second before the 90 s the receiver meant.
    expect(retryAfterSeconds).toBeGreaterThanOrEqual(85);
    expect(retryAfterSeconds).toBeLessThanOrEqual(90);
  });

  it.each(['/slow-down-garbled', '/unavailable-no-hint'])(
    'leaves retryAfterSeconds out for %s',
    async (pathname) => {
      const result = await sender.send(webhookTo(`${receiver.origin}${pathname}`));
      expect(result).toMatchObject({ outcome: 'failed' });
      expect(result).not.toHaveProperty('retryAfterSeconds');
    },
  );

  it('reads the status of an answer whose body is large, without reading it all', async () => {
    const result = await sender.send(webhookTo(`${receiver.origin}/big`));
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 200 });
  });

  it('gives up after timeoutMs on a receiver that never answers', async () => {
    const quick = createWebhookSender({ allowList: ['127.0.0.1'], timeoutMs: 300 });
    const result = await quick.send(webhookTo(`${receiver.origin}/hang`));
    expect(result).toEqual({ outcome: 'failed', error: 'timeout', durationMs: expect.any(Number) });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(3000);
  });

  it('keeps the status of a receiver that answers and then stalls its body', async () => {
    const quick = createWebhookSender({ allowList: ['127.0.0.1'], timeoutMs: 300 });
    const result = await quick.send(webhookTo(`${receiver.origin}/hang-after-status`));
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 200 });
    expect(result.durationMs).toBeLessThan(3000);
  });

  it('counts resolving in the timeout', async () => {
    const slowResolver: Resolver = () => new Promise(() => undefined);
    const quick = createWebhookSender({ allowList: ['127.0.0.1'], timeoutMs: 200, resolver: slowResolver });
    const result = await quick.send(webhookTo(`http://partner.example:${receiver.port}/`));
    expect(result).toMatchObject({ outcome: 'failed', error: 'timeout' });
  });

  it('fails with a short error, no stack, when nothing listens', async () => {
    const closed = await startLoopbackReceiver();
    const port = closed.port;
    await closed.stop();
    const result = await sender.send(webhookTo(`http://127.0.0.1:${port}/`));
    expect(result).toMatchObject({ outcome: 'failed', error: expect.stringContaining('ECONNREFUSED') });
    const { error } = result as { error: string };
    expect(error).not.toContain('\n');
    expect(error).not.toMatch(/\bat .*\.(ts|js):\d+/);
    expect(result).not.toHaveProperty('statusCode');
  });

  it('fails a name that resolves to nothing', async () => {
    const nowhere: Resolver = () => Promise.resolve([]);
    const result = await createWebhookSender({ resolver: nowhere }).send(
      webhookTo('https://partner.example/'),
    );
    expect(result).toMatchObject({ outcome: 'failed', error: 'partner.example resolves to no address' });
  });

  it('fails without connecting when a secret is unusable or there is none', async () => {
    await expect(
      sender.send(webhookTo(`${receiver.origin}/`, { secrets: ['whsec_!!!'] })),
    ).resolves.toMatchObject({
      outcome: 'failed',
      error: 'a signing secret is not whsec_ and base64',
    });
    await expect(sender.send(webhookTo(`${receiver.origin}/`, { secrets: [] }))).resolves.toMatchObject({
      outcome: 'failed',
      error: 'no signing secret',
    });
    expect(receiver.requests).toEqual([]);
  });

  it('refuses a URL it cannot parse or whose scheme is neither http nor https', async () => {
    await expect(sender.send(webhookTo('not a url'))).resolves.toMatchObject({
      outcome: 'refused',
      error: 'not an absolute URL',
    });
    await expect(sender.send(webhookTo(`ftp://127.0.0.1:${receiver.port}/`))).resolves.toMatchObject({
      outcome: 'refused',
      error: 'ftp: is neither http: nor https:',
    });
    expect(receiver.requests).toEqual([]);
  });

  it('lets an allow-listed host name through', async () => {
    const byName = createWebhookSender({ allowList: ['localhost'] });
    const result = await byName.send(webhookTo(`http://localhost:${receiver.port}/named`));
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 204 });
    expect(receiver.requests.map((request) => request.headers.host)).toEqual([`localhost:${receiver.port}`]);
  });
});

describe('over https', () => {
  let directory: string;
  let ca: Buffer;
  let receiver: LoopbackReceiver;

  /** The system's connector with the test CA trusted besides: verification stays on. */
  const trustingTestCa: Connector = ({ host, port, servername, tls: secure }) => {
    expect(secure).toBe(true);
    return tls.connect({ host, port, ...(servername !== undefined ? { servername } : {}), ca });
  };

  beforeAll(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bookings-webhook-certs-'));
    const authority = createCertificateAuthority(directory, { name: 'ca', commonName: 'Webhook Test CA' });
    const server = issueCertificate(authority, directory, {
      name: 'receiver',
      commonName: 'localhost',
      usage: 'server',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    });
    ca = fs.readFileSync(authority.certificate);
    receiver = await startLoopbackReceiver({
      answer: scripted,
      tls: { cert: fs.readFileSync(server.certificate), key: fs.readFileSync(server.privateKey) },
    });
  });

  afterAll(async () => {
    await receiver?.stop();
    if (directory) fs.rmSync(directory, { recursive: true, force: true });
  });

  beforeEach(() => {
    receiver.requests.length = 0;
  });

  it('delivers to a receiver whose certificate names the host', async () => {
    const sender = createWebhookSender({ allowList: ['localhost'], connector: trustingTestCa });
    const result = await sender.send(webhookTo(`https://localhost:${receiver.port}/hooks`));
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 204 });
    expect(receiver.requests).toHaveLength(1);
  });

  it('checks the certificate against an address the URL names', async () => {
    const sender = createWebhookSender({ allowList: ['127.0.0.1'], connector: trustingTestCa });
    const result = await sender.send(webhookTo(`https://127.0.0.1:${receiver.port}/hooks`));
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 204 });
  });

  it('checks the certificate against the URL host, not the address it resolved to', async () => {
    const sender = createWebhookSender({
      allowList: ['127.0.0.1'],
      resolver: () => Promise.resolve(['127.0.0.1']),
      connector: trustingTestCa,
    });
    const result = await sender.send(webhookTo(`https://partner.example:${receiver.port}/hooks`));
    expect(result).toMatchObject({
      outcome: 'failed',
      error: expect.stringContaining('ERR_TLS_CERT_ALTNAME_INVALID'),
    });
    expect(receiver.requests).toEqual([]);
  });

  it('refuses a certificate no trusted authority signed', async () => {
    const sender = createWebhookSender({ allowList: ['localhost'] });
    const result = await sender.send(webhookTo(`https://localhost:${receiver.port}/hooks`));
    expect(result).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/CERT|certificate/) });
    expect(receiver.requests).toEqual([]);
    await eventually(
      () => Promise.resolve(receiver.closedConnections),
      (closed) => closed === receiver.connections,
      { timeoutMs: 5000, intervalMs: 20 },
    );
  });
});
