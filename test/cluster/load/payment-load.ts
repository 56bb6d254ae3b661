// The payment chaos run's load: bookings paid over REST through localstripe as customers pay, in every way the flow has.
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { Pacer, type SeatPool } from './booking-load';
import type { Customer } from './fronts';
import { authenticateAtLocalstripe } from '../../../dev/stack/localstripe';

/**
 * instant: pm_card_visa, confirmed in the payment's answer. challenge-passed / challenge-failed: a 3-D Secure card,
 * the challenge finished at localstripe (a failed one is paid again with pm_card_visa half the time, once its decline
 * shows). late: the challenge passed right around the hold's end. cancel-during-challenge: the booking cancelled while
 * its challenge is open, half the time as the customer passes it.
 */
export const paymentScenarios = [
  'instant',
  'challenge-passed',
  'challenge-failed',
  'late',
  'cancel-during-challenge',
] as const;
export type PaymentScenario = (typeof paymentScenarios)[number];

const scenarioWeights: Record<PaymentScenario, number> = {
  instant: 0.25,
  'challenge-passed': 0.25,
  'challenge-failed': 0.2,
  late: 0.15,
  'cancel-during-challenge': 0.15,
};

/** Of the bookings the load saw confirmed, the share it cancels again (a refund by the fare's rule). */
const cancelAfterConfirmShare = 0.2;
const threeDSecureCard = '4000002500003155';
const callTimeoutMs = 15_000;
const maxAttempts = 8;

export const paymentRequestKinds = ['create', 'pay', 'authenticate', 'cancel', 'get'] as const;
export type PaymentRequestKind = (typeof paymentRequestKinds)[number];

/** What the load did to one booking, for the figures and for telling a driver's slip from the service's. */
export interface PaymentStory {
  bookingId: string;
  scenario: PaymentScenario;
  /** Intents the payment answers named (a failed challenge paid again has two). */
  intentIds: string[];
  /** `success=true|false` sent to localstripe, and what it answered (200, or 400 for an intent no longer open). */
  authentications: { intentId: string; success: boolean; status: number; atHoldEndMs?: number }[];
  /** The last answer of each step, e.g. `pay 200 CONFIRMED`, `cancel 200 CANCELLED`. */
  steps: string[];
}

interface RestAnswer {
  status: number | 'timeout' | 'network-error';
  body: Record<string, unknown>;
}

interface BookingBody {
  id?: string;
  status?: string;
  code?: string;
  hold_expires_at?: string;
  payment?: { status?: string; action?: { intent_id?: string; client_secret?: string } | null };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (low: number, high: number) => low + Math.random() * (high - low);

function pickScenario(): PaymentScenario {
  let roll = Math.random();
  for (const scenario of paymentScenarios) {
    roll -= scenarioWeights[scenario];
    if (roll < 0) return scenario;
  }
  return 'instant';
}

/** An answer worth sending again with the same key: nothing usable came back, or the service is still at it. */
function retryable(answer: RestAnswer): boolean {
  if (typeof answer.status !== 'number') return true;
  if (answer.status === 202 || answer.status >= 500) return true;
  return answer.status === 409 && (answer.body as BookingBody).code === 'IDEMPOTENCY_KEY_IN_USE';
}

export interface PaymentLoadOptions {
  customers: number;
  requestsPerSecond: number;
}

export class PaymentLoad {
  readonly stories: PaymentStory[] = [];
  readonly counts = new Map<string, number>();
  /** The latest hold's end of any booking the load made (ms since the epoch). */
  latestHoldEnd = 0;
  private passedWaiters: (() => void)[] = [];
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly pacer: Pacer;
  private readonly stripe: Stripe;
  private customerIndex = 0;
  private apiIndex = 0;

  constructor(
    private readonly apiUrls: readonly string[],
    private readonly localstripeUrl: string,
    private readonly localstripeKey: string,
    private readonly customers: readonly Customer[],
    private readonly seats: SeatPool,
    private readonly options: PaymentLoadOptions,
  ) {
    this.pacer = new Pacer(options.requestsPerSecond);
    const { hostname, port, protocol } = new URL(localstripeUrl);
    this.stripe = new Stripe(localstripeKey, {
      host: hostname,
      port: Number(port),
      protocol: protocol === 'http:' ? 'http' : 'https',
      maxNetworkRetries: 2,
    });
  }

  start(): void {
    this.running = Promise.all(
      Array.from({ length: this.options.customers }, async () => {
        while (!this.stopping) {
          await this.story().catch((error: unknown) => {
            process.stderr.write(
              `payment load driver error: ${error instanceof Error ? error.stack : String(error)}\n`,
            );
          });
        }
      }),
    ).then(() => undefined);
  }

  /** Lets every story in flight finish (a late one waits for its hold's end), then resolves. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  /**
   * Resolves at the next challenge localstripe accepted as passed (its webhook follows about a second later), or
   * after `timeoutMs`: true when one was passed.
   */
  nextPassedChallenge(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.passedWaiters = this.passedWaiters.filter((waiter) => waiter !== passed);
        resolve(false);
      }, timeoutMs);
      const passed = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.passedWaiters.push(passed);
    });
  }

  private count(kind: PaymentRequestKind, what: string): void {
    const key = `${kind} ${what}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  private async rest(
    kind: PaymentRequestKind,
    customer: Customer,
    method: string,
    path: string,
    apiUrl: string,
    options: { body?: unknown; key?: string } = {},
  ): Promise<RestAnswer> {
    await this.pacer.next();
    try {
      const response = await fetch(`${apiUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${customer.token}`,
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(callTimeoutMs),
      });
      const text = await response.text();
      let body: Record<string, unknown> = {};
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        // A dying process's plain-text answer: the status says enough.
      }
      this.count(kind, String(response.status));
      return { status: response.status, body };
    } catch (error) {
      const status = error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'network-error';
      this.count(kind, status);
      return { status, body: {} };
    }
  }

  /** One operation sent until it has a final answer, moving to the other API process on each retry. */
  private async attempt(call: (apiUrl: string) => Promise<RestAnswer>): Promise<RestAnswer> {
    const start = this.apiIndex++;
    let answer: RestAnswer = { status: 'network-error', body: {} };
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      answer = await call(this.apiUrls[(start + attempt) % this.apiUrls.length]);
      if (!retryable(answer)) return answer;
      await sleep(Math.min(4000, 500 * 2 ** attempt));
    }
    return answer;
  }

  private async get(customer: Customer, bookingId: string): Promise<RestAnswer> {
    return this.attempt((apiUrl) => this.rest('get', customer, 'GET', `/v1/bookings/${bookingId}`, apiUrl));
  }

  /** Reads the booking until `done` holds or `deadline` passes; the last body read. */
  private async waitFor(
    customer: Customer,
    bookingId: string,
    done: (body: BookingBody) => boolean,
    deadline: number,
  ): Promise<BookingBody | undefined> {
    let last: BookingBody | undefined;
    while (Date.now() < deadline) {
      const answer = await this.get(customer, bookingId);
      if (answer.status === 200) {
        last = answer.body;
        if (done(last)) return last;
      }
      await sleep(1000);
    }
    return last;
  }

  private async create(customer: Customer): Promise<BookingBody | undefined> {
    const seat = this.seats.forNewBooking(false);
    const key = randomUUID();
    const answer = await this.attempt((apiUrl) =>
      this.rest('create', customer, 'POST', '/v1/bookings', apiUrl, {
        key,
        body: {
          trip_id: seat.tripId,
          passengers: [
            {
              first_name: 'Chaos',
              last_name: 'Payment',
              email: customer.email,
              seat_number: seat.seatNumber,
              fare_class: 'STANDARD',
            },
          ],
          contact_email: customer.email,
        },
      }),
    );
    const body = answer.body as BookingBody;
    if (answer.status === 201) return body;
    if (answer.status === 202 && body.id !== undefined) {
      // Still being made: the booking is paid once it can be read.
      const id = body.id;
      return this.waitFor(customer, id, (read) => read.status !== undefined, Date.now() + 60_000);
    }
    return undefined;
  }

  private async pay(
    customer: Customer,
    story: PaymentStory,
    paymentMethod: string,
  ): Promise<{ status: string; intentId?: string; clientSecret?: string }> {
    const key = randomUUID();
    const answer = await this.attempt((apiUrl) =>
      this.rest('pay', customer, 'POST', `/v1/bookings/${story.bookingId}/payment`, apiUrl, {
        key,
        body: { payment_method: paymentMethod },
      }),
    );
    const body = answer.body as BookingBody;
    const action = body.payment?.action ?? undefined;
    const what =
      answer.status === 200 || answer.status === 201
        ? `${body.status ?? '?'}${action?.intent_id === undefined ? '' : ' requires action'}`
        : `${answer.status} ${body.code ?? ''}`.trim();
    story.steps.push(`pay ${what}`);
    if (action?.intent_id !== undefined && !story.intentIds.includes(action.intent_id)) {
      story.intentIds.push(action.intent_id);
    }
    return {
      status: what,
      ...(action?.intent_id === undefined ? {} : { intentId: action.intent_id }),
      ...(action?.client_secret === undefined ? {} : { clientSecret: action.client_secret }),
    };
  }

  /** The customer's part of the challenge, as Stripe.js does it in the browser. */
  private async authenticate(
    story: PaymentStory,
    intentId: string,
    clientSecret: string,
    success: boolean,
    holdExpiresAt?: number,
  ): Promise<void> {
    let status = 0;
    for (let attempt = 0; attempt < 3 && status === 0; attempt += 1) {
      try {
        status = await authenticateAtLocalstripe(
          this.localstripeUrl,
          { intentId, clientSecret, success },
          10_000,
        );
      } catch {
        await sleep(500);
      }
    }
    this.count('authenticate', String(status));
    if (success && status === 200) {
      const waiters = this.passedWaiters;
      this.passedWaiters = [];
      for (const waiter of waiters) waiter();
    }
    story.authentications.push({
      intentId,
      success,
      status,
      ...(holdExpiresAt === undefined ? {} : { atHoldEndMs: Date.now() - holdExpiresAt }),
    });
  }

  private async cancel(customer: Customer, story: PaymentStory): Promise<void> {
    const answer = await this.attempt((apiUrl) =>
      this.rest('cancel', customer, 'PUT', `/v1/bookings/${story.bookingId}/cancel`, apiUrl, {
        body: { reason: 'payment chaos run' },
      }),
    );
    const body = answer.body as BookingBody;
    story.steps.push(
      `cancel ${answer.status} ${(answer.status === 200 ? body.status : body.code) ?? ''}`.trim(),
    );
  }

  private async threeDSecureMethod(): Promise<string> {
    const method = await this.stripe.paymentMethods.create({
      type: 'card',
      card: { number: threeDSecureCard, exp_month: 12, exp_year: 2034, cvc: '123' },
    });
    return method.id;
  }

  private async story(): Promise<void> {
    const customer = this.customers[this.customerIndex++ % this.customers.length];
    const created = await this.create(customer);
    if (created?.id === undefined) return;
    const story: PaymentStory = {
      bookingId: created.id,
      scenario: pickScenario(),
      intentIds: [],
      authentications: [],
      steps: [`create ${created.status ?? '?'}`],
    };
    this.stories.push(story);
    const holdExpiresAt = Date.parse(created.hold_expires_at ?? '') || Date.now();
    this.latestHoldEnd = Math.max(this.latestHoldEnd, holdExpiresAt);

    if (story.scenario === 'instant') {
      const paid = await this.pay(customer, story, 'pm_card_visa');
      if (paid.status === 'CONFIRMED' && Math.random() < cancelAfterConfirmShare) {
        await sleep(between(500, 3000));
        await this.cancel(customer, story);
      }
      return;
    }

    const open = await this.pay(customer, story, await this.threeDSecureMethod());
    if (open.intentId === undefined || open.clientSecret === undefined) return;
    const { intentId, clientSecret } = open;
    switch (story.scenario) {
      case 'challenge-passed': {
        await sleep(between(500, 4000));
        await this.authenticate(story, intentId, clientSecret, true);
        if (Math.random() < cancelAfterConfirmShare) {
          const confirmed = await this.waitFor(
            customer,
            story.bookingId,
            (body) => body.status !== 'PENDING_PAYMENT',
            holdExpiresAt + 30_000,
          );
          if (confirmed?.status === 'CONFIRMED') await this.cancel(customer, story);
        }
        return;
      }
      case 'challenge-failed': {
        await sleep(between(500, 4000));
        await this.authenticate(story, intentId, clientSecret, false);
        if (Math.random() < 0.5) {
          // The decline reaches the booking by reconciliation only (localstripe sends no event for it).
          const declined = await this.waitFor(
            customer,
            story.bookingId,
            (body) => body.status !== 'PENDING_PAYMENT' || body.payment?.action == null,
            holdExpiresAt - 5000,
          );
          if (declined?.status === 'PENDING_PAYMENT' && declined.payment?.action == null) {
            await this.pay(customer, story, 'pm_card_visa');
          }
        }
        return;
      }
      case 'late': {
        const at = holdExpiresAt + between(-2500, 1000);
        await sleep(Math.max(0, at - Date.now()));
        await this.authenticate(story, intentId, clientSecret, true, holdExpiresAt);
        return;
      }
      case 'cancel-during-challenge': {
        await sleep(between(500, 3000));
        if (Math.random() < 0.5) {
          await Promise.all([
            this.authenticate(story, intentId, clientSecret, true),
            this.cancel(customer, story),
          ]);
        } else {
          await this.cancel(customer, story);
        }
        return;
      }
    }
  }
}
