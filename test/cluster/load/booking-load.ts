// The chaos run's booking load: simulated customers creating, paying, changing and cancelling through both fronts
// of every API process at a bounded rate, retrying as a real client would and remembering every answer.
import { randomUUID } from 'node:crypto';
import type { AcknowledgedRequests } from '../invariants/scan';
import type { BookingSnapshot, ChangeSpec, CreateSpec, Customer, Front } from './fronts';
import { RequestLog, type OutcomeClass, type RequestKind } from './request-log';

/** Starts requests no faster than `perSecond`, however many customers wait. */
export class Pacer {
  private nextSlot = 0;

  constructor(private readonly perSecond: number) {}

  async next(): Promise<void> {
    const now = Date.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + 1000 / this.perSecond;
    if (slot > now) await new Promise((resolve) => setTimeout(resolve, slot - now));
  }
}

/** Free seats per trip, each handed out once; a few creates ask for a seat already given, to race for it. */
export class SeatPool {
  private readonly free = new Map<string, string[]>();
  private readonly given = new Map<string, string[]>();
  private tripIndex = 0;

  constructor(
    private readonly tripIds: readonly string[],
    seatNumbers: readonly string[],
    private readonly bookingsPerTrip: number,
  ) {
    for (const tripId of tripIds) this.free.set(tripId, [...seatNumbers]);
  }

  /** A seat for a new booking, moving to the next trip every `bookingsPerTrip` bookings. */
  forNewBooking(contended: boolean): { tripId: string; seatNumber: string } {
    const tripId = this.tripIds[Math.floor(this.tripIndex / this.bookingsPerTrip) % this.tripIds.length];
    this.tripIndex += 1;
    const given = this.given.get(tripId) ?? [];
    if (contended && given.length > 0) return { tripId, seatNumber: given[given.length - 1] };
    return { tripId, seatNumber: this.take(tripId) };
  }

  /** Another free seat of the same trip, for a seat change or an added passenger. */
  take(tripId: string): string {
    const seats = this.free.get(tripId) ?? [];
    const seatNumber = seats.shift();
    if (seatNumber === undefined) throw new Error(`trip ${tripId} ran out of free seats: seed more trips`);
    this.given.set(tripId, [...(this.given.get(tripId) ?? []), seatNumber]);
    return seatNumber;
  }
}

export interface LoadOptions {
  /** Customers acting at once (each runs one booking's story after another). */
  customers: number;
  requestsPerSecond: number;
  /** Share of the bookings made and handled over gRPC (the rest over REST). */
  grpcShare: number;
  /** Chances, per booking, of each step after the create. */
  payShare: number;
  changeShare: number;
  cancelShare: number;
  /** Share of creates that ask for a seat another create was given. */
  contendedShare: number;
  /** Attempts of one operation (the first and its retries with the same key) before the client gives up. */
  maxAttempts: number;
}

export const defaultLoadOptions: LoadOptions = {
  customers: 12,
  requestsPerSecond: 6,
  grpcShare: 0.3,
  payShare: 0.75,
  changeShare: 0.3,
  cancelShare: 0.3,
  contendedShare: 0.05,
  maxAttempts: 8,
};

/** What the load knows of one booking it was told about. */
export interface TrackedBooking {
  id: string;
  customer: Customer;
  protocol: 'rest' | 'grpc';
  tripId: string;
  /** The last state a call answered. */
  snapshot?: BookingSnapshot;
  paid: boolean;
  changed: boolean;
  cancelled: boolean;
}

/** A create the client never saw answered OK or refused: the scan settles what became of it. */
export interface UnresolvedCreate {
  customer: Customer;
  protocol: 'rest' | 'grpc';
  key: string;
  /** Known when an answer named it (202, BOOKING_PROCESSING). */
  bookingId?: string;
  lastStatus: string;
}

/** The answers an operation's retries may still change; anything else is final. */
function shouldRetry(status: string, code: string | undefined, outcome: OutcomeClass): boolean {
  if (outcome === 'processing' || outcome === 'failed') return true;
  return status === '409' && code === 'IDEMPOTENCY_KEY_IN_USE';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class BookingLoad {
  readonly log = new RequestLog();
  readonly bookings = new Map<string, TrackedBooking>();
  readonly unresolvedCreates: UnresolvedCreate[] = [];
  readonly acknowledged = {
    created: [] as string[],
    paid: [] as string[],
    changed: [] as { bookingId: string; version: number }[],
    cancelled: [] as string[],
  };
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly pacer: Pacer;
  private customerIndex = 0;
  private frontIndex = 0;

  constructor(
    private readonly fronts: { rest: readonly Front[]; grpc: readonly Front[] },
    private readonly customers: readonly Customer[],
    private readonly seats: SeatPool,
    private readonly reSignIn: (customer: Customer) => Promise<void>,
    private readonly options: LoadOptions = defaultLoadOptions,
  ) {
    this.pacer = new Pacer(options.requestsPerSecond);
  }

  start(): void {
    this.running = Promise.all(
      Array.from({ length: this.options.customers }, async () => {
        while (!this.stopping) {
          await this.story().catch((error: unknown) => {
            // A bug in the driver, not an answer of the service: keep it visible without stopping the load.
            process.stderr.write(
              `load driver error: ${error instanceof Error ? error.stack : String(error)}\n`,
            );
          });
        }
      }),
    ).then(() => undefined);
  }

  /** Lets every story in flight finish its current operation (with its retries), then resolves. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  acknowledgedRequests(): AcknowledgedRequests {
    return this.acknowledged;
  }

  private nextCustomer(): Customer {
    const customer = this.customers[this.customerIndex % this.customers.length];
    this.customerIndex += 1;
    return customer;
  }

  /** The front for an attempt: gRPC stories and REST stories each move to the next API process on a retry. */
  private frontFor(protocol: 'rest' | 'grpc', start: number, attempt: number): Front {
    const list = this.fronts[protocol];
    return list[(start + attempt) % list.length];
  }

  /** One operation, retried with the same key (or version) until a final answer or `maxAttempts`. */
  private async attempt(
    kind: RequestKind,
    protocol: 'rest' | 'grpc',
    customer: Customer,
    bookingId: string | undefined,
    call: (front: Front) => ReturnType<Front['create']>,
  ) {
    const start = this.frontIndex++;
    let last: Awaited<ReturnType<Front['create']>> = { ok: false, status: 'not-sent' };
    let outcome: OutcomeClass = 'failed';
    for (let attempt = 0; attempt < this.options.maxAttempts; attempt += 1) {
      await this.pacer.next();
      const front = this.frontFor(protocol, start, attempt);
      const startedAt = Date.now();
      last = await call(front);
      outcome = this.log.add(
        kind,
        front.name,
        startedAt,
        last,
        bookingId ?? last.booking?.id ?? last.bookingId,
      );
      if (last.status === '401' || last.status === 'UNAUTHENTICATED') {
        await this.reSignIn(customer);
        continue;
      }
      if (!shouldRetry(last.status, last.code, outcome)) break;
      await sleep(Math.min(8000, 500 * 2 ** attempt));
    }
    return { answer: last, outcome };
  }

  private async story(): Promise<void> {
    const customer = this.nextCustomer();
    const protocol = Math.random() < this.options.grpcShare ? 'grpc' : 'rest';
    const seat = this.seats.forNewBooking(Math.random() < this.options.contendedShare);
    const spec: CreateSpec = {
      tripId: seat.tripId,
      passengers: [
        {
          firstName: 'Chaos',
          lastName: 'Load',
          email: customer.email,
          seatNumber: seat.seatNumber,
          fareClass: 'STANDARD',
        },
      ],
      contactEmail: customer.email,
    };
    const key = randomUUID();
    const created = await this.attempt('create', protocol, customer, undefined, (front) =>
      front.create(customer, spec, key),
    );
    if (created.outcome !== 'ok' || created.answer.booking === undefined) {
      if (created.outcome !== 'refused') {
        this.unresolvedCreates.push({
          customer,
          protocol,
          key,
          lastStatus: `${created.answer.status} ${created.answer.code ?? ''}`.trim(),
          ...(created.answer.bookingId === undefined ? {} : { bookingId: created.answer.bookingId }),
        });
      }
      return;
    }
    const booking: TrackedBooking = {
      id: created.answer.booking.id,
      customer,
      protocol,
      tripId: seat.tripId,
      snapshot: created.answer.booking,
      paid: false,
      changed: false,
      cancelled: false,
    };
    this.bookings.set(booking.id, booking);
    this.acknowledged.created.push(booking.id);

    if (this.stopping) return;
    if (Math.random() < this.options.payShare) await this.pay(booking);
    if (this.stopping) return;
    if (Math.random() < this.options.changeShare) await this.change(booking);
    if (this.stopping) return;
    if (Math.random() < this.options.cancelShare) await this.cancel(booking);
  }

  private async pay(booking: TrackedBooking): Promise<void> {
    const key = randomUUID();
    // Now and then a gateway that takes the money and loses the answer: the saga's retry must not charge twice.
    const token = Math.random() < 0.1 ? 'tok_timeoutOnce' : 'tok_visa';
    const paid = await this.attempt('pay', booking.protocol, booking.customer, booking.id, (front) =>
      front.pay(booking.customer, booking.id, token, key),
    );
    if (paid.outcome === 'ok') {
      booking.paid = true;
      this.acknowledged.paid.push(booking.id);
      if (paid.answer.booking) booking.snapshot = paid.answer.booking;
    }
  }

  private async change(booking: TrackedBooking): Promise<void> {
    const snapshot = booking.snapshot;
    if (snapshot === undefined || snapshot.passengers.length === 0) return;
    const change: ChangeSpec =
      Math.random() < 0.5
        ? {
            kind: 'seat',
            passengerId: snapshot.passengers[0].id,
            seatNumber: this.seats.take(booking.tripId),
          }
        : {
            kind: 'add-passenger',
            passenger: {
              firstName: 'Chaos',
              lastName: 'Companion',
              email: booking.customer.email,
              seatNumber: this.seats.take(booking.tripId),
              fareClass: 'STANDARD',
            },
          };
    // The same expected version on every retry: a change that was made answers VERSION_MISMATCH, never twice.
    const changed = await this.attempt('change', booking.protocol, booking.customer, booking.id, (front) =>
      front.change(booking.customer, booking.id, snapshot.version, change),
    );
    if (changed.outcome === 'ok' && changed.answer.booking) {
      booking.changed = true;
      booking.snapshot = changed.answer.booking;
      this.acknowledged.changed.push({ bookingId: booking.id, version: changed.answer.booking.version });
    }
  }

  private async cancel(booking: TrackedBooking): Promise<void> {
    const cancelled = await this.attempt('cancel', booking.protocol, booking.customer, booking.id, (front) =>
      front.cancel(booking.customer, booking.id),
    );
    if (cancelled.outcome === 'ok') {
      booking.cancelled = true;
      this.acknowledged.cancelled.push(booking.id);
      if (cancelled.answer.booking) booking.snapshot = cancelled.answer.booking;
    }
  }
}
