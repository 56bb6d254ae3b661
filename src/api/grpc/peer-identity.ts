// Who is on the other end of a mutual-TLS connection: the client certificate's CN and SANs, against the allow-list.
import type { PeerCertificate } from 'node:tls';

/** One name a client certificate carries: its subject CN, or a DNS or URI subject alternative name. */
export interface PeerName {
  readonly kind: 'CN' | 'DNS' | 'URI';
  readonly value: string;
}

// Node writes SANs as `DNS:a, URI:b`, JSON-quoting a value that itself contains a comma or a quote.
const alternativeNamePattern = /([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g;

function alternativeNames(subjectAltName: string | undefined): PeerName[] {
  if (!subjectAltName) return [];
  const names: PeerName[] = [];
  for (const match of subjectAltName.matchAll(alternativeNamePattern)) {
    const kind = match[1];
    const value = match[2].startsWith('"') ? (JSON.parse(match[2]) as string) : match[2];
    if ((kind === 'DNS' || kind === 'URI') && value) names.push({ kind, value });
  }
  return names;
}

/** Every name of a peer certificate that may identify a service, CN first. */
export function peerNames(certificate: PeerCertificate | undefined): PeerName[] {
  if (!certificate) return [];
  const commonName: unknown = certificate.subject?.CN;
  const commonNames = (Array.isArray(commonName) ? commonName : [commonName]).filter(
    (name): name is string => typeof name === 'string' && name.length > 0,
  );
  return [
    ...commonNames.map((value) => ({ kind: 'CN' as const, value })),
    ...alternativeNames(certificate.subjectaltname),
  ];
}

/** Host-like names compare without case (as DNS does); URIs compare exactly. */
function sameName(name: PeerName, allowed: string): boolean {
  return name.kind === 'URI' ? name.value === allowed : name.value.toLowerCase() === allowed.toLowerCase();
}

/** The part of grpc-js's per-call auth context (`call.getAuthContext()`) this check reads. */
export interface PeerAuthContext {
  readonly sslPeerCertificate?: PeerCertificate;
}

export type PeerCheck =
  | { readonly outcome: 'allowed'; readonly identity: string }
  | { readonly outcome: 'no-certificate' }
  | { readonly outcome: 'not-allowed'; readonly names: readonly string[] };

/** Matches the connection's client certificate against the allow-list of service identities. */
export function checkPeer(authContext: PeerAuthContext, allowedClients: readonly string[]): PeerCheck {
  const names = peerNames(authContext.sslPeerCertificate);
  if (names.length === 0 && !authContext.sslPeerCertificate) return { outcome: 'no-certificate' };
  for (const name of names) {
    const allowed = allowedClients.find((candidate) => sameName(name, candidate));
    if (allowed !== undefined) return { outcome: 'allowed', identity: name.value };
  }
  return { outcome: 'not-allowed', names: names.map((name) => `${name.kind}:${name.value}`) };
}
