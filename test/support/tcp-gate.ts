// A loopback TCP relay in front of a server: while shut, connections are taken and held without a byte passed on.
import net from 'node:net';

export interface TcpGate {
  /** `127.0.0.1:<port>`: point a client here instead of at the server. */
  readonly address: string;
  /** Relays new connections from now on; held ones stay held (their client times out, as on a dead network). */
  open(): void;
  close(): Promise<void>;
}

/** `target` is `host:port`; starts shut when `open` is false. */
export async function startTcpGate(target: string, options: { open: boolean }): Promise<TcpGate> {
  const [host, port] = [
    target.slice(0, target.lastIndexOf(':')),
    Number(target.slice(target.lastIndexOf(':') + 1)),
  ];
  let relaying = options.open;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (!relaying) return;
    const upstream = net.connect(port, host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: gatePort } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${gatePort}`,
    open() {
      relaying = true;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
