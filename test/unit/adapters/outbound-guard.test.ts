// The outbound guard's policy: which addresses a partner's webhook URL may lead to, and its allow-list's entries.
import { expect } from '@jest/globals';
import { createOutboundGuard, refusalOf } from '../../../src/adapters/outbound-guard';

describe('refusalOf', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.255.0.9', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['10.0.0.1', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.254', 'a private address'],
    ['192.168.1.10', 'a private address'],
    ['169.254.1.1', 'a link-local address'],
    ['fe80::1', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd12:3456::1', 'a unique-local address'],
    ['0.0.0.0', 'the unspecified address'],
    ['0.1.2.3', 'the unspecified address'],
    ['::', 'the unspecified address'],
    ['100.64.0.1', 'a carrier-grade NAT address'],
    ['100.127.255.254', 'a carrier-grade NAT address'],
    ['192.0.2.1', 'a reserved address'],
    ['240.0.0.1', 'a reserved address'],
    ['2001:db8::1', 'a reserved address'],
    ['255.255.255.255', 'the broadcast address'],
    ['224.0.0.1', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['::7f00:1', 'an IPv4-compatible IPv6 address'],
    ['64:ff9b::a00:1', 'a special-purpose address (rfc6052)'],
    ['2002:a00:1::', 'a special-purpose address (6to4)'],
    ['fec0::1', 'a special-purpose address (deprecatedSiteLocal)'],
  ])('refuses %s: %s', (address, reason) => {
    expect(refusalOf(address)).toBe(reason);
  });

  it.each([
    ['169.254.169.254', 'AWS, GCP and Azure'],
    ['fd00:ec2::254', 'AWS over IPv6'],
    ['100.100.100.200', 'Alibaba Cloud'],
    ['::ffff:169.254.169.254', 'IPv4-mapped'],
  ])('names %s (%s) a cloud metadata address', (address) => {
    expect(refusalOf(address)).toBe('a cloud metadata address');
  });

  it.each([
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['::ffff:10.0.0.1', 'a private address'],
    ['::ffff:192.168.1.10', 'a private address'],
    ['[::ffff:172.16.0.1]', 'a private address'],
  ])('reads the IPv4 address inside %s: %s', (address, reason) => {
    expect(refusalOf(address)).toBe(reason);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::6810:84e5',
    '::ffff:8.8.8.8',
  ])('lets the public address %s through', (address) => {
    expect(refusalOf(address)).toBeUndefined();
  });

  it.each(['localhost', '127.1', '2130706433', '0x7f.0.0.1', '', '1.2.3.4.5'])(
    'refuses %j as no IP address (URL parsing writes addresses canonically first)',
    (text) => {
      expect(refusalOf(text)).toBe('not an IP address');
    },
  );
});

describe('the allow-list', () => {
  it.each(['localhost', 'receiver.test.', '127.0.0.1', '::1', '10.0.0.0/8', 'fd00::/8', '0.0.0.0/0'])(
    'takes %s',
    (entry) => {
      expect(() => createOutboundGuard({ allowList: [entry] })).not.toThrow();
    },
  );

  it.each(['http://localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', 'local host', '', '127.0.0.1/x'])(
    'refuses %j with a clear error',
    (entry) => {
      expect(() => createOutboundGuard({ allowList: [entry] })).toThrow(
        `outbound allow-list entry "${entry}" is neither a host name, an IP address nor a CIDR range`,
      );
    },
  );
});
