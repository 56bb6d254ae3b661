// The outbound guard refuses loopback, private and metadata addresses before a connection opens, and after one opens
// to somewhere else than it was told; nothing here connects outside loopback.
import dns from 'node:dns';
import net from 'node:net';
import { expect } from '@jest/globals';
import { type Connector, type Resolver } from '../../../src/adapters/outbound-guard';
import { createWebhookSender } from '../../../src/adapters/webhook-sender';
import type { WebhookRequest } from '../../../src/ports/webhooks';
import { startLoopbackReceiver, type LoopbackReceiver } from '../../support/loopback-receiver';
import { eventually } from '../../support/outcomes';

const secret = `whsec_${Buffer.from('outbound-guard-test-secret-32-bytes!').toString('base64')}`;

function webhookTo(url: string): WebhookRequest {
  return {
    url,
    messageId: 'msg_guard',
    timestamp: new Date(),
    payload: JSON.stringify({ type: 'booking.confirmed', data: {} }),
    secrets: [secret],
  };
}

/** Nothing reached the receiver: every connection it saw (if any) is closed, and no request came over one. */
async function expectNothingReceived(receiver: LoopbackReceiver, connections: number): Promise<void> {
  await eventually(
    () => Promise.resolve(receiver.closedConnections),
    (closed) => closed === receiver.connections,
    { timeoutMs: 5000, intervalMs: 20 },
  );
  expect(receiver.connections).toBe(connections);
  expect(receiver.requests).toEqual([]);
}

describe('with no allow-list, through the real resolver and connector', () => {
  let ipv4: LoopbackReceiver;
  let ipv6: LoopbackReceiver;
  const sender = createWebhookSender({ timeoutMs: 5000 });

  beforeAll(async () => {
    ipv4 = await startLoopbackReceiver({ address: '127.0.0.1' });
    ipv6 = await startLoopbackReceiver({ address: '::1' });
  });

  afterAll(async () => {
    await Promise.all([ipv4?.stop(), ipv6?.stop()]);
  });

  it('is given a host name that this machine resolves to loopback', async () => {
    const addresses = await dns.promises.lookup('localhost', { all: true });
    expect(addresses.length).toBeGreaterThan(0);
    for (const { address } of addresses) expect(address === '::1' || address.startsWith('127.')).toBe(true);
  });

  it.each([
    ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}/hook`, '127.0.0.1 is a loopback address'],
    [
      '127.1, URL shorthand',
      (port: number) => `http://127.1:${port}/hook`,
      '127.0.0.1 is a loopback address',
    ],
    [
      '2130706433, a decimal address',
      (port: number) => `http://2130706433:${port}/`,
      '127.0.0.1 is a loopback address',
    ],
    [
      '0x7f.0.0.1, a hexadecimal part',
      (port: number) => `http://0x7f.0.0.1:${port}/`,
      '127.0.0.1 is a loopback address',
    ],
    [
      '0.0.0.0, which Linux connects to this host',
      (port: number) => `http://0.0.0.0:${port}/`,
      '0.0.0.0 is the unspecified address',
    ],
    [
      '::ffff:127.0.0.1, IPv4-mapped',
      (port: number) => `http://[::ffff:127.0.0.1]:${port}/`,
      '::ffff:7f00:1 is a loopback address',
    ],
    [
      'localhost',
      (port: number) => `http://localhost:${port}/hook`,
      /^localhost resolves (to|only to refused addresses:) .*loopback/,
    ],
    ['LOCALHOST', (port: number) => `http://LOCALHOST:${port}/hook`, /^localhost resolves .*loopback/],
  ])('refuses %s and opens no connection', async (_label, urlOf, reason) => {
    const result = await sender.send(webhookTo(urlOf(ipv4.port)));
    expect(result).toEqual({
      outcome: 'refused',
      error: expect.stringMatching(reason),
      durationMs: expect.any(Number),
    });
    await expectNothingReceived(ipv4, 0);
  });

  it('refuses [::1] and opens no connection', async () => {
    const result = await sender.send(webhookTo(`http://[::1]:${ipv6.port}/hook`));
    expect(result).toMatchObject({ outcome: 'refused', error: '::1 is a loopback address' });
    await expectNothingReceived(ipv6, 0);
  });

  it('refuses https: alike', async () => {
    const result = await sender.send(webhookTo(`https://localhost:${ipv4.port}/hook`));
    expect(result).toMatchObject({ outcome: 'refused' });
    await expectNothingReceived(ipv4, 0);
  });
});

describe('through a replaced resolver and connector', () => {
  let receiver: LoopbackReceiver;
  const resolved: string[] = [];
  const connected: Array<Parameters<Connector>[0]> = [];

  /** Answers a name's addresses as a hostile DNS server would. */
  const resolverOf =
    (answers: Record<string, string[]>): Resolver =>
    (hostname) => {
      resolved.push(hostname);
      return Promise.resolve(answers[hostname] ?? []);
    };

  /** Records every call; opens nothing itself unless `open` says where on loopback, and throws for anything else. */
  const connectorOf =
    (open?: (target: Parameters<Connector>[0]) => net.Socket): Connector =>
    (target) => {
      connected.push(target);
      if (open) return open(target);
      throw new Error(`the test connector refuses to open ${target.host}`);
    };

  beforeAll(async () => {
    receiver = await startLoopbackReceiver();
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  beforeEach(() => {
    resolved.length = 0;
    connected.length = 0;
  });

  it.each([
    ['10.0.0.1', '10.0.0.1 is a private address'],
    ['192.168.1.10', '192.168.1.10 is a private address'],
    ['169.254.169.254', '169.254.169.254 is a cloud metadata address'],
    ['[fd00:ec2::254]', 'fd00:ec2::254 is a cloud metadata address'],
    ['100.100.100.200', '100.100.100.200 is a cloud metadata address'],
    ['[fe80::1]', 'fe80::1 is a link-local address'],
  ])('refuses the address %s without resolving or connecting', async (host, reason) => {
    const sender = createWebhookSender({ resolver: resolverOf({}), connector: connectorOf() });
    const result = await sender.send(webhookTo(`http://${host}/latest/meta-data/`));
    expect(result).toMatchObject({ outcome: 'refused', error: reason });
    expect(resolved).toEqual([]);
    expect(connected).toEqual([]);
  });

  it.each([
    ['10.0.0.1', 'a private address'],
    ['192.168.1.10', 'a private address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['fd00:ec2::254', 'a cloud metadata address'],
    ['::ffff:10.0.0.1', 'a private address'],
  ])('refuses a name that resolves to %s without connecting', async (address, reason) => {
    const sender = createWebhookSender({
      resolver: resolverOf({ 'partner.example': [address] }),
      connector: connectorOf(),
    });
    const result = await sender.send(webhookTo('https://partner.example/hooks'));
    expect(result).toMatchObject({
      outcome: 'refused',
      error: `partner.example resolves to ${address}, ${reason}`,
    });
    expect(resolved).toEqual(['partner.example']);
    expect(connected).toEqual([]);
  });

  it('names every address of a name that resolves only to refused ones', async () => {
    const sender = createWebhookSender({
      resolver: resolverOf({ 'partner.example': ['10.0.0.1', '169.254.169.254'] }),
      connector: connectorOf(),
    });
    const result = await sender.send(webhookTo('https://partner.example/hooks'));
    expect(result).toMatchObject({
      outcome: 'refused',
      error:
        'partner.example resolves only to refused addresses: 10.0.0.1 (a private address), ' +
        '169.254.169.254 (a cloud metadata address)',
    });
    expect(connected).toEqual([]);
  });

  it('connects only to the public address of a name that resolves to private ones as well', async () => {
    const sender = createWebhookSender({
      resolver: resolverOf({ 'partner.example': ['10.0.0.1', '93.184.215.14', '192.168.1.10'] }),
      connector: connectorOf(),
    });
    const result = await sender.send(webhookTo('https://partner.example/hooks'));
    // The test connector threw rather than connect: the attempt fails, and it was asked for the public address alone.
    expect(result).toMatchObject({
      outcome: 'failed',
      error: 'the test connector refuses to open 93.184.215.14',
    });
    expect(connected).toEqual([
      { host: '93.184.215.14', port: 443, servername: 'partner.example', tls: true },
    ]);
  });

  it('closes a connection that reaches a private address where a public one was resolved (DNS rebinding)', async () => {
    const sender = createWebhookSender({
      resolver: resolverOf({ 'rebind.example': ['93.184.215.14'] }),
      connector: connectorOf(() => {
        const socket = net.connect({ host: '127.0.0.1', port: receiver.port });
        Object.defineProperty(socket, 'remoteAddress', { get: () => '10.0.0.1' });
        return socket;
      }),
    });
    const result = await sender.send(webhookTo('http://rebind.example/hooks'));
    expect(result).toMatchObject({
      outcome: 'refused',
      error: 'rebind.example connected to 10.0.0.1, a private address',
    });
    expect(connected).toEqual([
      { host: '93.184.215.14', port: 80, servername: 'rebind.example', tls: false },
    ]);
    await expectNothingReceived(receiver, 1);
  });

  it('closes a connection that lands on loopback, whatever it was asked for', async () => {
    const before = receiver.connections;
    const sender = createWebhookSender({
      resolver: resolverOf({ 'rebind.example': ['93.184.215.14'] }),
      connector: connectorOf(() => net.connect({ host: '127.0.0.1', port: receiver.port })),
    });
    const result = await sender.send(webhookTo('http://rebind.example/hooks'));
    expect(result).toMatchObject({
      outcome: 'refused',
      error: 'rebind.example connected to 127.0.0.1, a loopback address',
    });
    await expectNothingReceived(receiver, before + 1);
  });

  it('lets an allow-listed address through the connected-address check too', async () => {
    const sender = createWebhookSender({
      allowList: ['127.0.0.0/8'],
      resolver: resolverOf({ 'receiver.test': ['127.0.0.1'] }),
      connector: connectorOf((target) => {
        if (target.host !== '127.0.0.1') throw new Error(`the test connector refuses to open ${target.host}`);
        return net.connect({ host: target.host, port: target.port });
      }),
    });
    const result = await sender.send(webhookTo(`http://receiver.test:${receiver.port}/hooks`));
    expect(result).toMatchObject({ outcome: 'delivered', statusCode: 204 });
    expect(receiver.requests.map((request) => request.headers.host)).toEqual([
      `receiver.test:${receiver.port}`,
    ]);
  });
});
