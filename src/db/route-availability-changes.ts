// Hears PostgreSQL say that a route's seat availability may have changed, on a connection of its own that comes back.
import { Client } from 'pg';
import {
  standaloneBackgroundFailureReporter,
  type ReportBackgroundFailure,
} from '../observability/background-failures';

/** The channel migration 008's triggers notify; the payload is a route id or `everyRoute`. */
const routeAvailabilityChannel = 'route_availability_changed';
/** Said by a change that may touch every route (a layout, a stop's time zone, a table emptied). */
export const everyRoute = '*';

export interface RouteAvailabilityChanges {
  /**
   * True while every change is heard: from the LISTEN's acknowledgement until the connection is found lost. Whoever
   * keeps availability keeps it only while this holds.
   */
  readonly hearing: boolean;
  /**
   * Calls `onChange` with each route id whose availability may have changed, and with `everyRoute` whenever hearing
   * stops or starts again (changes in between went unheard).
   */
  subscribe(onChange: (routeId: string) => void): void;
  /** Stops listening for good. */
  close(): Promise<void>;
}

/** Where the connection's loss and return are told (the process's logger). */
export interface ListeningLog {
  info(message: string): void;
  warn(details: { err: unknown }, message: string): void;
}

export interface RouteAvailabilityChangesOptions {
  databaseUrl: string;
  logger: ListeningLog;
  /** Told when a lost connection fails to close; by default `logger` and a counter of its own. */
  reportFailure?: ReportBackgroundFailure;
  /** Shown in pg_stat_activity (default `bookings-api-availability-changes`). */
  applicationName?: string;
  /** The wait before the first reconnection, doubled after each failure up to `maximumReconnectDelayMs`. */
  firstReconnectDelayMs?: number;
  maximumReconnectDelayMs?: number;
}

/** Opens the listening connection; resolves once the first attempt has succeeded or failed (it retries either way). */
export async function listenForRouteAvailabilityChanges(
  options: RouteAvailabilityChangesOptions,
): Promise<RouteAvailabilityChanges> {
  const { logger } = options;
  const reportFailure = options.reportFailure ?? standaloneBackgroundFailureReporter(logger);
  const firstReconnectDelayMs = options.firstReconnectDelayMs ?? 500;
  const maximumReconnectDelayMs = options.maximumReconnectDelayMs ?? 30_000;
  const subscribers = new Set<(routeId: string) => void>();
  const lostClients = new WeakSet<Client>();
  let current: Client | undefined;
  let hearing = false;
  let closed = false;
  let reconnectDelayMs = firstReconnectDelayMs;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const tell = (routeId: string) => {
    for (const onChange of subscribers) onChange(routeId);
  };

  /** Whoever keeps availability forgets it: changes from now on may go unheard. True if it was hearing. */
  function stopHearing(): boolean {
    if (!hearing) return false;
    hearing = false;
    tell(everyRoute);
    return true;
  }

  /** Ends a connection that is no longer to be listened on; its own end and error events then change nothing. */
  function release(client: Client): Promise<void> {
    lostClients.add(client);
    if (current === client) current = undefined;
    // The connection is dropped either way; a close that fails only leaves the server to notice it is gone.
    return client.end().catch((error: unknown) => reportFailure('close_availability_listener', error));
  }

  function lost(client: Client, error?: unknown): void {
    if (lostClients.has(client)) return;
    void release(client);
    if (stopHearing()) {
      logger.warn(
        { err: error },
        'availability changes no longer heard; availability is read afresh until they are',
      );
    }
    if (closed) return;
    reconnectTimer = setTimeout(() => void connect(), reconnectDelayMs);
    reconnectTimer.unref();
    reconnectDelayMs = Math.min(reconnectDelayMs * 2, maximumReconnectDelayMs);
  }

  async function connect(): Promise<void> {
    reconnectTimer = undefined;
    const client = new Client({
      connectionString: options.databaseUrl,
      application_name: options.applicationName ?? 'bookings-api-availability-changes',
      // A connection that died without a word (a dropped network path) is found out by TCP keep-alive.
      keepAlive: true,
    });
    client.on('notification', (message) => {
      if (message.channel === routeAvailabilityChannel) tell(message.payload ?? everyRoute);
    });
    client.on('error', (error) => lost(client, error));
    client.on('end', () => lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${routeAvailabilityChannel}`);
    } catch (error) {
      lost(client, error);
      return;
    }
    // Closed meanwhile, or lost already (and a reconnection scheduled then): this one is not kept.
    if (closed || lostClients.has(client)) {
      lost(client);
      return;
    }
    current = client;
    hearing = true;
    reconnectDelayMs = firstReconnectDelayMs;
    // Whatever changed before the LISTEN went unheard.
    tell(everyRoute);
    logger.info('availability changes heard; availability answers may be kept');
  }

  await connect();
  return {
    get hearing() {
      return hearing;
    },
    subscribe(onChange) {
      subscribers.add(onChange);
    },
    async close() {
      closed = true;
      if (reconnectTimer !== undefined) clearTimeout(reconnectTimer);
      const client = current;
      stopHearing();
      if (client !== undefined) await release(client);
    },
  };
}
