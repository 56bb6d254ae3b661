// Loopback ports for the servers tests start, kept from other processes until those servers bind them.
import net from 'node:net';
import { once } from 'node:events';

/**
 * A free loopback port that the kernel will not hand to anyone else for about a minute. The port is bound, connected
 * to, and its accepted side closed first, which leaves that side in TIME_WAIT: Linux then skips the port for every
 * bind to port 0 and every outgoing connection, while a server that binds it by number with SO_REUSEADDR (Node,
 * PostgreSQL and Temporal's servers all set it) still can. Only a process that picks the very same number itself can
 * take it first; `withFreePort` retries those starts.
 */
export async function findFreePort(): Promise<number> {
  const server = net.createServer();
  server.unref();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || address === null) {
    server.close();
    throw new Error('no port');
  }
  const accepted = once(server, 'connection') as Promise<[net.Socket]>;
  const client = net.connect(address.port, '127.0.0.1');
  client.unref();
  try {
    await once(client, 'connect');
    const [socket] = await accepted;
    const clientClosed = once(client, 'close');
    // The server's side closes first, so the TIME_WAIT (and the hold on the port) is on its side; the client answers
    // the close with its own.
    client.on('end', () => client.end());
    socket.end();
    await Promise.all([once(socket, 'close'), clientClosed]);
  } finally {
    client.destroy();
    server.close();
  }
  return address.port;
}

/** Address-in-use, however a server reports it: an errno, or a child process's last log lines. */
export function isAddressInUse(error: unknown): boolean {
  const text =
    error instanceof Error ? `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` : '';
  return /EADDRINUSE|address already in use/i.test(text);
}

/**
 * Starts a server on a port from `findFreePort`, and on a new one when the port was taken all the same before the
 * server bound it.
 */
export async function withFreePort<Server>(
  start: (port: number) => Promise<Server>,
  tries = 3,
): Promise<Server> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await findFreePort();
    try {
      return await start(port);
    } catch (error) {
      if (!isAddressInUse(error) || attempt >= tries) throw error;
    }
  }
}
