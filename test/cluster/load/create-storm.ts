// A burst of creates while booking workers and API processes are killed every few seconds, and what its ids became.
import { randomUUID } from 'node:crypto';
import type { ClusterStack } from '../../../dev/stack/cluster';
import type { Customer, Front } from './fronts';
import type { SeatPool } from './booking-load';

/** A booking id a create answered with (201's booking, REST 202's Location, gRPC BOOKING_PROCESSING's id). */
export interface HandedOutId {
  bookingId: string;
  customer: Customer;
  /** The create's answer: `201`, `202`, `UNAVAILABLE`... */
  answeredWith: string;
}

export interface CreateStormOptions {
  fronts: { rest: Front[]; grpc: Front[] };
  customers: readonly Customer[];
  seats: SeatPool;
  /** Creates in flight at once. */
  clients: number;
  durationMs: number;
  /** SIGKILLs every this long, taking the groups of `victims` in turn (a process still down is left be). */
  killEveryMs: number;
  victims: readonly (readonly string[])[];
  /**
   * Between kills these processes are frozen (SIGSTOP) for `frozenShare` of each period, as an overloaded or
   * stalled worker is: creates then outlast their answer time, which a quick restart alone rarely makes them do.
   */
  frozen: readonly string[];
  frozenShare: number;
  grpcShare: number;
}

export interface CreateStormResult {
  creates: number;
  /** Creates by answer (`201`, `202`, `409 SEAT_UNAVAILABLE`, `network-error`...). */
  answers: Map<string, number>;
  handedOut: HandedOutId[];
  kills: { name: string; afterMs: number }[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

export async function runCreateStorm(
  stack: ClusterStack,
  options: CreateStormOptions,
): Promise<CreateStormResult> {
  const startedAt = Date.now();
  const endsAt = startedAt + options.durationMs;
  const result: CreateStormResult = { creates: 0, answers: new Map(), handedOut: [], kills: [] };
  let nextCustomer = 0;
  let nextFront = 0;

  async function client(): Promise<void> {
    while (Date.now() < endsAt) {
      const customer = options.customers[nextCustomer++ % options.customers.length];
      const useGrpc = Math.random() < options.grpcShare;
      const fronts = useGrpc ? options.fronts.grpc : options.fronts.rest;
      const front = fronts[nextFront++ % fronts.length];
      const { tripId, seatNumber } = options.seats.forNewBooking(false);
      const passenger = {
        firstName: 'Storm',
        lastName: 'Traveller',
        email: customer.email,
        seatNumber,
        fareClass: 'STANDARD',
      };
      const answer = await front.create(
        customer,
        { tripId, passengers: [passenger], contactEmail: customer.email },
        randomUUID(),
      );
      result.creates += 1;
      bump(result.answers, `${answer.status}${answer.code === undefined ? '' : ` ${answer.code}`}`);
      const bookingId = answer.booking?.id ?? answer.bookingId;
      if (bookingId !== undefined) {
        result.handedOut.push({ bookingId, customer, answeredWith: answer.status });
        // A held booking is let go at once, so the accounts stay below their cap of unpaid holds.
        if (answer.ok) await front.cancel(customer, bookingId);
      } else if (answer.status === 'network-error' || answer.status === 'timeout') {
        await sleep(250);
      }
    }
  }

  async function killer(): Promise<void> {
    for (let index = 0; Date.now() + options.killEveryMs <= endsAt; index += 1) {
      await sleep(options.killEveryMs);
      for (const name of options.victims[index % options.victims.length]) {
        if (stack.pid(name) === undefined) continue;
        try {
          stack.kill(name, 'SIGKILL');
          result.kills.push({ name, afterMs: Date.now() - startedAt });
        } catch {
          // It died or was restarting as the signal went out: down already, which is what the kill is for.
        }
      }
    }
  }

  function signal(names: readonly string[], how: NodeJS.Signals): void {
    for (const name of names) {
      if (stack.pid(name) === undefined) continue;
      try {
        stack.kill(name, how);
      } catch {
        // Restarting after a kill: the new process starts thawed.
      }
    }
  }

  async function freezer(): Promise<void> {
    const frozenMs = options.killEveryMs * options.frozenShare;
    while (Date.now() + options.killEveryMs <= endsAt) {
      signal(options.frozen, 'SIGSTOP');
      await sleep(frozenMs);
      signal(options.frozen, 'SIGCONT');
      await sleep(options.killEveryMs - frozenMs);
    }
    signal(options.frozen, 'SIGCONT');
  }

  await Promise.all([killer(), freezer(), ...Array.from({ length: options.clients }, () => client())]);
  return result;
}

export interface IdResolution {
  /** Ids read as a booking (200). */
  bookings: number;
  /** Ids read as the reason their create ended, by code (SEAT_UNAVAILABLE...). */
  reasons: Map<string, number>;
  /** Ids that read 404: promises broken. */
  notFound: string[];
  /** Ids still answering 202, or nothing readable, when the time ran out. */
  unresolved: string[];
}

/** Reads every id handed out until it answers something other than 202 (or `timeoutMs` passes). */
export async function resolveHandedOutIds(
  handedOut: readonly HandedOutId[],
  readers: readonly Front[],
  timeoutMs: number,
): Promise<IdResolution> {
  const resolution: IdResolution = { bookings: 0, reasons: new Map(), notFound: [], unresolved: [] };
  const deadline = Date.now() + timeoutMs;
  let pending = [...new Map(handedOut.map((id) => [id.bookingId, id])).values()];
  let reader = 0;
  while (pending.length > 0) {
    const stillPending: HandedOutId[] = [];
    for (const id of pending) {
      const answer = await readers[reader++ % readers.length].get(id.customer, id.bookingId);
      if (answer.ok) resolution.bookings += 1;
      else if (answer.status === '404') resolution.notFound.push(id.bookingId);
      // A 4xx names why the create ended (SEAT_UNAVAILABLE...); 202, a 5xx or no answer is asked again.
      else if (/^4\d\d$/.test(answer.status) && answer.status !== '429' && answer.code !== undefined) {
        bump(resolution.reasons, answer.code);
      } else stillPending.push(id);
    }
    pending = stillPending;
    if (pending.length === 0 || Date.now() > deadline) break;
    await sleep(1000);
  }
  resolution.unresolved = pending.map((id) => id.bookingId);
  return resolution;
}
