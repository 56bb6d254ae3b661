// Outbound connections to URLs a partner chose: only public addresses, checked on the address actually connected to.
import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// Named on their own so the reason says what was reached for; each also lies in a range refused below.
const metadataAddresses = new Set(
  ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'].map((address) =>
    ipaddr.parse(address).toNormalizedString(),
  ),
);

const rangeReasons: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local address',
  unspecified: 'the unspecified address',
  carrierGradeNat: 'a carrier-grade NAT address',
  reserved: 'a reserved address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
};

/** An address with an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) read as the IPv4 address it carries. */
function parseAddress(text: string): Address | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // net.isIP is strict where ipaddr.js is lenient (it reads `127.1` and octal parts): only canonical text passes.
  if (net.isIP(bare) === 0) return undefined;
  const address = ipaddr.parse(bare);
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

/**
 * Why the service must not connect to `address`, or undefined when it may: only global unicast addresses pass.
 * Loopback, private, link-local, unique-local, carrier-grade NAT, reserved, broadcast, multicast and every other
 * special-purpose range reach this host, its network or its cloud rather than a partner's server.
 */
export function refusalOf(address: string): string | undefined {
  const parsed = parseAddress(address);
  if (parsed === undefined) return 'not an IP address';
  if (metadataAddresses.has(parsed.toNormalizedString())) return 'a cloud metadata address';
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) {
    // ::a.b.c.d (IPv4-compatible, deprecated) and :: and ::1: an IPv4 address in disguise or this host.
    return rangeReasons[parsed.range()] ?? 'an IPv4-compatible IPv6 address';
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  return rangeReasons[range] ?? `a special-purpose address (${range})`;
}

/** Host names, addresses and CIDR ranges the guard lets through: loopback receivers in development and tests. */
interface AllowList {
  hosts: ReadonlySet<string>;
  ranges: ReadonlyArray<[Address, number]>;
}

function hostKey(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

function parseAllowList(entries: readonly string[]): AllowList {
  const hosts = new Set<string>();
  const ranges: Array<[Address, number]> = [];
  for (const entry of entries.map((text) => text.trim())) {
    const [addressPart, prefixPart, ...rest] = entry.split('/');
    const address = parseAddress(addressPart);
    if (address !== undefined && rest.length === 0) {
      const bits = address.kind() === 'ipv4' ? 32 : 128;
      const prefix =
        prefixPart === undefined ? bits : /^\d{1,3}$/.test(prefixPart) ? Number(prefixPart) : NaN;
      if (prefix >= 0 && prefix <= bits) {
        ranges.push([address, prefix]);
        continue;
      }
    } else if (prefixPart === undefined && /^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/i.test(entry)) {
      hosts.add(hostKey(entry));
      continue;
    }
    throw new Error(
      `outbound allow-list entry "${entry}" is neither a host name, an IP address nor a CIDR range`,
    );
  }
  return { hosts, ranges };
}

function allowListCovers(allowList: AllowList, address: string): boolean {
  const parsed = parseAddress(address);
  return (
    parsed !== undefined &&
    allowList.ranges.some(([range, prefix]) => range.kind() === parsed.kind() && parsed.match(range, prefix))
  );
}

/** A connection the guard would not open, or closed because of where it led: nothing was sent. */
export class OutboundRefusedError extends Error {
  override readonly name = 'OutboundRefusedError';
}

/** Every address a host name resolves to. */
export type Resolver = (hostname: string) => Promise<readonly string[]>;

/**
 * Opens a connection to `host`, always an IP address the guard has checked. `servername` is the URL's host name, for
 * TLS's SNI and certificate check (absent when the URL names an address). The socket emits `connect` once connected,
 * and `secureConnect` too when `tls`.
 */
export type Connector = (target: {
  host: string;
  port: number;
  servername?: string;
  tls: boolean;
}) => net.Socket;

export const systemResolver: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export const systemConnector: Connector = ({ host, port, servername, tls: secure }) =>
  secure
    ? tls.connect({
        host,
        port,
        ...(servername !== undefined ? { servername } : {}),
        ALPNProtocols: ['http/1.1'],
      })
    : net.connect({ host, port });

export interface OutboundGuardOptions {
  /** Host names, IP addresses and CIDR ranges exempt from the policy. */
  allowList?: readonly string[];
  resolver?: Resolver;
  connector?: Connector;
}

export interface OutboundGuard {
  /**
   * A connected socket (TLS established for https:) to the URL's host, on an address the policy lets through, or an
   * OutboundRefusedError. A host name is resolved here and only its passing addresses are tried, in order, so a
   * resolution the connection would not repeat cannot slip a refused address past the check; the address the
   * socket reports once connected is checked again before it is handed over. Aborting `signal` abandons the attempt.
   */
  connect(url: URL, signal: AbortSignal): Promise<net.Socket>;
}

export function createOutboundGuard(options: OutboundGuardOptions = {}): OutboundGuard {
  const allowList = parseAllowList(options.allowList ?? []);
  const resolver = options.resolver ?? systemResolver;
  const connector = options.connector ?? systemConnector;

  return {
    async connect(url, signal) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new OutboundRefusedError(`${url.protocol} is neither http: nor https:`);
      }
      const secure = url.protocol === 'https:';
      const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
      // URL parsing has already turned `127.1`, `2130706433` and `[0:0::1]` into canonical addresses.
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const literal = net.isIP(host) !== 0;
      const hostAllowed = allowList.hosts.has(hostKey(host));
      const refusal = (address: string) =>
        hostAllowed || allowListCovers(allowList, address) ? undefined : refusalOf(address);

      const addresses = literal ? [host] : await abortable(resolver(host), signal);
      if (addresses.length === 0) throw new Error(`${host} resolves to no address`);
      const verdicts = addresses.map((address) => ({ address, reason: refusal(address) }));
      const passing = verdicts.filter((verdict) => verdict.reason === undefined);
      if (passing.length === 0) throw new OutboundRefusedError(describeRefusal(host, literal, verdicts));

      let lastError: unknown;
      for (const { address } of passing) {
        signal.throwIfAborted();
        try {
          return await open(
            connector,
            { host: address, port, ...(literal ? {} : { servername: host }), tls: secure },
            (remote) => {
              const reason = refusal(remote);
              return reason === undefined ? undefined : `${host} connected to ${remote}, ${reason}`;
            },
            signal,
          );
        } catch (error) {
          if (error instanceof OutboundRefusedError || signal.aborted) throw error;
          lastError = error;
        }
      }
      throw lastError;
    },
  };
}

function describeRefusal(
  host: string,
  literal: boolean,
  verdicts: ReadonlyArray<{ address: string; reason?: string }>,
): string {
  if (literal) return `${host} is ${verdicts[0].reason}`;
  if (verdicts.length === 1) return `${host} resolves to ${verdicts[0].address}, ${verdicts[0].reason}`;
  return `${host} resolves only to refused addresses: ${verdicts
    .map((verdict) => `${verdict.address} (${verdict.reason})`)
    .join(', ')}`;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(asError(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(asError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Connects through `connector` and waits until the socket is ready. The peer's address is checked as soon as TCP
 * connects, before a byte of the request is written, and once more when the socket is ready.
 */
function open(
  connector: Connector,
  target: { host: string; port: number; servername?: string; tls: boolean },
  refusalOfPeer: (remote: string) => string | undefined,
  signal: AbortSignal,
): Promise<net.Socket> {
  return new Promise<net.Socket>((resolve, reject) => {
    const socket = connector(target);
    const peerRefusal = (): OutboundRefusedError | undefined => {
      const remote = socket.remoteAddress;
      if (remote === undefined)
        return new OutboundRefusedError(`${target.host} connected to no known address`);
      const reason = refusalOfPeer(remote);
      return reason === undefined ? undefined : new OutboundRefusedError(reason);
    };
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      socket.off('connect', onConnect);
      socket.off('secureConnect', onReady);
      socket.off('error', settle);
      socket.off('close', onClose);
      signal.removeEventListener('abort', onAbort);
      if (error === undefined) {
        resolve(socket);
      } else {
        socket.destroy();
        reject(error);
      }
    };
    const onReady = () => settle(peerRefusal());
    // Over TLS the handshake follows TCP's connect: the peer is checked at both.
    const onConnect = target.tls
      ? () => {
          const refused = peerRefusal();
          if (refused) settle(refused);
        }
      : onReady;
    const onClose = () => settle(new Error(`connection to ${target.host} closed before it was ready`));
    const onAbort = () => settle(asError(signal.reason));
    socket.on('connect', onConnect);
    if (target.tls) socket.on('secureConnect', onReady);
    socket.on('error', settle);
    socket.on('close', onClose);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** An abort's reason as the Error it normally is. */
export function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
