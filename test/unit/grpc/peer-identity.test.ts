// Unit tests: client certificate names (CN, DNS and URI SANs) and the service allow-list decision.
import type { PeerCertificate } from 'node:tls';
import { checkPeer, peerNames } from '../../../src/api/grpc/peer-identity';

function certificate(commonName: string | string[] | undefined, subjectAltName?: string): PeerCertificate {
  return { subject: { CN: commonName }, subjectaltname: subjectAltName } as unknown as PeerCertificate;
}

describe('peerNames', () => {
  it('reads the CN and the DNS and URI alternative names, ignoring IP addresses and email', () => {
    const names = peerNames(
      certificate(
        'booking-cli',
        'DNS:cli.internal, IP Address:10.0.0.1, URI:spiffe://bookings.example.com/cli, email:ops@example.com',
      ),
    );
    expect(names).toEqual([
      { kind: 'CN', value: 'booking-cli' },
      { kind: 'DNS', value: 'cli.internal' },
      { kind: 'URI', value: 'spiffe://bookings.example.com/cli' },
    ]);
  });

  it('unquotes a SAN that Node escaped because it contains a comma', () => {
    expect(peerNames(certificate(undefined, 'URI:"urn:x,y", DNS:plain'))).toEqual([
      { kind: 'URI', value: 'urn:x,y' },
      { kind: 'DNS', value: 'plain' },
    ]);
  });

  it('keeps every CN of a subject with several', () => {
    expect(peerNames(certificate(['first', 'second']))).toEqual([
      { kind: 'CN', value: 'first' },
      { kind: 'CN', value: 'second' },
    ]);
  });

  it('has no names without a certificate', () => {
    expect(peerNames(undefined)).toEqual([]);
  });
});

describe('checkPeer', () => {
  const allowList = ['booking-cli', 'spiffe://bookings.example.com/payments'];

  it('allows a certificate whose CN is listed, without regard to case', () => {
    expect(checkPeer({ sslPeerCertificate: certificate('Booking-CLI') }, allowList)).toEqual({
      outcome: 'allowed',
      identity: 'Booking-CLI',
    });
  });

  it('allows a certificate by a URI SAN, compared exactly', () => {
    const payments = certificate('payments-7f9c', 'URI:spiffe://bookings.example.com/payments');
    expect(checkPeer({ sslPeerCertificate: payments }, allowList)).toEqual({
      outcome: 'allowed',
      identity: 'spiffe://bookings.example.com/payments',
    });
    const shouting = certificate('x', 'URI:SPIFFE://BOOKINGS.EXAMPLE.COM/PAYMENTS');
    expect(checkPeer({ sslPeerCertificate: shouting }, allowList).outcome).toBe('not-allowed');
  });

  it('refuses a certificate naming no listed service, and reports its names', () => {
    expect(checkPeer({ sslPeerCertificate: certificate('intruder', 'DNS:evil.example') }, allowList)).toEqual(
      {
        outcome: 'not-allowed',
        names: ['CN:intruder', 'DNS:evil.example'],
      },
    );
  });

  it('reports a connection without a client certificate', () => {
    expect(checkPeer({}, allowList)).toEqual({ outcome: 'no-certificate' });
  });
});
