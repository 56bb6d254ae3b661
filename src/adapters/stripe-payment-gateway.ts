// The PaymentGateway port on Stripe's PaymentIntents and Refunds, through the official SDK (docs/payments.md).
import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import {
  assertIdempotencyKey,
  assertValidAmount,
  GatewayTimeoutError,
  GatewayUnavailableError,
  IdempotencyKeyConflictError,
  PaymentNotFoundError,
  RefundRejectedError,
  type ChargeAnswer,
  type ChargeRequest,
  type ChargeResult,
  type OpenChargeResult,
  type PaymentGateway,
  type PaymentState,
  type ProcessorIntent,
  type ProcessorRefund,
  type RecentPayments,
  type RefundRequest,
  type RefundResult,
} from '../ports/payment-gateway';

export interface StripePaymentGatewayOptions {
  /** `sk_test_…` or `sk_live_…`. */
  secretKey: string;
  /** Another Stripe-compatible API (localstripe in the tests); Stripe's own when absent. */
  apiUrl?: string;
  /** How long one HTTP request may take before its outcome counts as unknown. */
  timeoutMs?: number;
  /** The SDK's own retries of a request that failed on the network, a 409 or a 5xx, with the same key. */
  maxNetworkRetries?: number;
  /** How far back an idempotency key's earlier payment is looked for among the account's intents. */
  lookbackSeconds?: number;
  /** The most pages of 100 intents that look goes through. */
  maxLookupPages?: number;
  /** The most pages of 100 intents, and of 100 refunds, one `recentPayments` reads. */
  maxRecentPages?: number;
  /** The clock the look-back is measured on. */
  now?: () => Date;
}

/**
 * One request, and one retry by the SDK after half a second to a second, fit twice in the activity's 30 seconds;
 * longer outages are left to Temporal's retry policy, which backs off durably and retries with the same key.
 */
export const stripeDefaults = {
  timeoutMs: 8000,
  maxNetworkRetries: 1,
  // Longer than any hold (BOOKING_HOLD_SECONDS is at most a day) and Stripe's own 24 hours of idempotency keys.
  lookbackSeconds: 7 * 86_400,
  maxLookupPages: 10,
  maxRecentPages: 20,
} as const;

const metadataKeys = {
  idempotencyKey: 'idempotency_key',
  bookingId: 'booking_id',
  description: 'description',
  paymentMethod: 'payment_method',
  declineReason: 'decline_reason',
} as const;

type CallKind = 'create' | 'decline' | 'cancel' | 'refund';

/**
 * Each kind of call gets its own key from the request's, so that a retry of the same step replays at Stripe, while
 * two different steps of one payment never collide (Stripe refuses a key reused with other parameters).
 */
export function stripeIdempotencyKey(kind: CallKind, requestKey: string): string {
  const plain = `${kind}:${requestKey}`;
  // Stripe takes keys of up to 255 characters.
  return plain.length <= 255
    ? plain
    : `${kind}:sha256:${createHash('sha256').update(requestKey).digest('hex')}`;
}

function apiEndpoint(apiUrl: string): { host: string; port: number; protocol: 'http' | 'https' } {
  const parsed = new URL(apiUrl);
  const protocol = parsed.protocol === 'http:' ? 'http' : 'https';
  const port = parsed.port === '' ? (protocol === 'http' ? 80 : 443) : Number(parsed.port);
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port, protocol };
}

function isStripeError(error: unknown): error is Stripe.errors.StripeError {
  return error instanceof Stripe.errors.StripeError;
}

/**
 * The port's errors for what no retry inside this call can settle: the network or Stripe failing (a retry with the
 * same key is safe), a key reused with another request. Anything else is left as it is.
 */
function transportFailure(error: unknown): unknown {
  if (!isStripeError(error)) return error;
  if (error instanceof Stripe.errors.StripeConnectionError) {
    const detail = error.detail as { code?: string } | undefined;
    return detail?.code === Stripe.HttpClient.TIMEOUT_ERROR_CODE
      ? new GatewayTimeoutError(`Stripe did not answer in time: ${error.message}`, { cause: error })
      : new GatewayUnavailableError(`Stripe could not be reached: ${error.message}`, { cause: error });
  }
  if (error instanceof Stripe.errors.StripeIdempotencyError) {
    // A request under the same key still in flight at Stripe: its outcome will be replayed.
    if (error.code === 'idempotency_key_in_use') {
      return new GatewayUnavailableError('a Stripe request with this key is in flight', { cause: error });
    }
    return new IdempotencyKeyConflictError('idempotency key already used for a different request', {
      cause: error,
    });
  }
  if (error instanceof Stripe.errors.StripeRateLimitError || (error.statusCode ?? 0) >= 500) {
    return new GatewayUnavailableError(
      `Stripe answered ${error.statusCode ?? 'an error'}: ${error.message}`,
      {
        cause: error,
      },
    );
  }
  return error;
}

function isMissing(error: unknown): boolean {
  return (
    isStripeError(error) &&
    (error.statusCode === 404 ||
      (error.type === 'StripeInvalidRequestError' && error.code === 'resource_missing'))
  );
}

function methodMasked(intent: Stripe.PaymentIntent): string {
  const method = intent.payment_method;
  const card = typeof method === 'object' && method !== null ? method.card : undefined;
  return card ? `${card.brand} •••• ${card.last4}` : 'card';
}

/** The issuer's reason when it gave one, else Stripe's code; the SDK leaves absent ones empty. */
function reasonOf(error: { decline_code?: string | null; code?: string | null } | null | undefined): string {
  return error?.decline_code || error?.code || 'declined';
}

/** Where the intent stands, in the port's terms. */
export function paymentStateOf(intent: Stripe.PaymentIntent): PaymentState {
  switch (intent.status) {
    case 'succeeded':
      return { status: 'approved', transactionId: intent.id, methodMasked: methodMasked(intent) };
    case 'requires_action': {
      const next = intent.next_action;
      const redirectUrl = next?.redirect_to_url?.url ?? undefined;
      return {
        status: 'requires_action',
        intentId: intent.id,
        clientSecret: intent.client_secret ?? '',
        nextAction: { type: next?.type ?? 'use_stripe_sdk', ...(redirectUrl ? { redirectUrl } : {}) },
      };
    }
    // Automatic capture: an intent waiting for its capture or its confirmation has not taken money yet.
    case 'processing':
    case 'requires_capture':
    case 'requires_confirmation':
      return { status: 'processing', intentId: intent.id };
    case 'requires_payment_method':
      return { status: 'declined', reason: reasonOf(intent.last_payment_error) };
    case 'canceled':
      return { status: 'canceled', intentId: intent.id };
    default:
      return { status: 'processing', intentId: intent.id };
  }
}

/** The same for a caller that knows only approved and declined: a cancelled intent was declined, with its reason. */
function closedResultOf(intent: Stripe.PaymentIntent): ChargeResult | undefined {
  const state = paymentStateOf(intent);
  if (state.status === 'approved' || state.status === 'declined') return state;
  if (state.status === 'canceled') {
    return { status: 'declined', reason: intent.metadata[metadataKeys.declineReason] ?? 'canceled' };
  }
  return undefined;
}

function bookingIdOf(metadata: Stripe.Metadata | null | undefined): string | undefined {
  const bookingId = metadata?.[metadataKeys.bookingId];
  return bookingId === undefined || bookingId === '' ? undefined : bookingId;
}

/** An intent as the reconciliation compares it: ended one way or another, or still open. */
export function processorIntentOf(intent: Stripe.PaymentIntent): ProcessorIntent {
  const state = paymentStateOf(intent);
  const failed = state.status === 'declined' && intent.last_payment_error != null;
  const status =
    state.status === 'approved'
      ? 'succeeded'
      : state.status === 'canceled'
        ? 'canceled'
        : failed
          ? 'failed'
          : 'open';
  return {
    intentId: intent.id,
    bookingId: bookingIdOf(intent.metadata),
    idempotencyKey: intent.metadata[metadataKeys.idempotencyKey],
    status,
    amount: { amountMinor: intent.amount, currency: intent.currency.toUpperCase() },
    ...(failed ? { failureReason: reasonOf(intent.last_payment_error) } : {}),
    createdAt: intent.created,
  };
}

/** A refund as the reconciliation compares it; a cancelled one gave nothing back, as a failed one. */
export function processorRefundOf(refund: Stripe.Refund): ProcessorRefund {
  const status =
    refund.status === 'succeeded'
      ? 'succeeded'
      : refund.status === 'failed' || refund.status === 'canceled'
        ? 'failed'
        : 'pending';
  const intent = refund.payment_intent;
  return {
    refundId: refund.id,
    intentId: typeof intent === 'string' ? intent : (intent?.id ?? undefined),
    bookingId: bookingIdOf(refund.metadata),
    status,
    amount: { amountMinor: refund.amount, currency: refund.currency.toUpperCase() },
    ...(status === 'failed' ? { failureReason: refund.failure_reason ?? refund.status ?? 'failed' } : {}),
    createdAt: refund.created,
  };
}

/** The payment method as the request named it: Stripe turns test ids (`pm_card_visa`) into new ones. */
function sameCharge(intent: Stripe.PaymentIntent, request: ChargeRequest): boolean {
  return (
    intent.amount === request.amount.amountMinor &&
    intent.currency.toUpperCase() === request.amount.currency &&
    intent.metadata[metadataKeys.paymentMethod] === request.paymentToken
  );
}

export function createStripePaymentGateway(options: StripePaymentGatewayOptions): PaymentGateway {
  const stripe = new Stripe(options.secretKey, {
    timeout: options.timeoutMs ?? stripeDefaults.timeoutMs,
    maxNetworkRetries: options.maxNetworkRetries ?? stripeDefaults.maxNetworkRetries,
    appInfo: { name: 'bus-booking-service' },
    ...(options.apiUrl !== undefined ? apiEndpoint(options.apiUrl) : {}),
  });
  const lookbackSeconds = options.lookbackSeconds ?? stripeDefaults.lookbackSeconds;
  const maxLookupPages = options.maxLookupPages ?? stripeDefaults.maxLookupPages;
  const maxRecentPages = options.maxRecentPages ?? stripeDefaults.maxRecentPages;
  const now = options.now ?? (() => new Date());

  async function call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw transportFailure(error);
    }
  }

  /**
   * The intent an earlier attempt made with this key, newest first as Stripe lists them. Stripe's Search API would
   * find it in one call but is eventually consistent (a retry seconds later could miss it) and localstripe lacks it;
   * a retry of the same key comes within the look-back, where the listing meets it first.
   */
  async function intentMadeWith(idempotencyKey: string): Promise<Stripe.PaymentIntent | undefined> {
    const cutoff = Math.floor(now().getTime() / 1000) - lookbackSeconds;
    let startingAfter: string | undefined;
    for (let page = 0; page < maxLookupPages; page += 1) {
      const listed = await call(() =>
        stripe.paymentIntents.list({
          limit: 100,
          expand: ['data.payment_method'],
          ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}),
        }),
      );
      for (const intent of listed.data) {
        if (intent.metadata[metadataKeys.idempotencyKey] === idempotencyKey) return intent;
      }
      const last = listed.data.at(-1);
      if (!listed.has_more || last === undefined || last.created < cutoff) return undefined;
      startingAfter = last.id;
    }
    return undefined;
  }

  async function retrieve(intentId: string): Promise<Stripe.PaymentIntent> {
    if (!/^pi_[A-Za-z0-9_]+$/.test(intentId)) throw new PaymentNotFoundError(`no payment intent ${intentId}`);
    try {
      return await call(() => stripe.paymentIntents.retrieve(intentId, { expand: ['payment_method'] }));
    } catch (error) {
      if (isMissing(error)) throw new PaymentNotFoundError(`no payment intent ${intentId}`, { cause: error });
      throw error;
    }
  }

  async function create(request: ChargeRequest): Promise<Stripe.PaymentIntent | ChargeResult> {
    const metadata: Record<string, string> = {
      [metadataKeys.idempotencyKey]: request.idempotencyKey,
      [metadataKeys.paymentMethod]: request.paymentToken,
      // localstripe takes no `description` on an intent; the metadata shows it in the dashboard all the same.
      [metadataKeys.description]: request.description.slice(0, 500),
      ...(request.bookingId !== undefined ? { [metadataKeys.bookingId]: request.bookingId } : {}),
    };
    try {
      return await call(() =>
        stripe.paymentIntents.create(
          {
            amount: request.amount.amountMinor,
            currency: request.amount.currency.toLowerCase(),
            payment_method: request.paymentToken,
            // Cards only, so a confirm never needs a return URL for a redirect-based method. localstripe, on the
            // 2017 API, refuses the parameter (and offers cards only anyway).
            ...(options.apiUrl === undefined ? { allowed_payment_method_types: ['card' as const] } : {}),
            capture_method: 'automatic',
            confirm: true,
            metadata,
            expand: ['payment_method'],
          },
          { idempotencyKey: stripeIdempotencyKey('create', request.idempotencyKey) },
        ),
      );
    } catch (error) {
      if (error instanceof Stripe.errors.StripeCardError) {
        return { status: 'declined', reason: reasonOf(error) };
      }
      // The payment method the client tokenised is not the account's: the simulator's `invalid_token`.
      if (isMissing(error)) return { status: 'declined', reason: 'invalid_token' };
      // Any other refusal of the request itself (a `tok_…` where a payment method belongs) can never succeed on
      // retry: declined, so the customer may pay another way, instead of an activity retried until the hold ends.
      if (error instanceof Stripe.errors.StripeInvalidRequestError) {
        return { status: 'declined', reason: error.code ?? 'invalid_payment_method' };
      }
      throw error;
    }
  }

  /** A challenge nobody can hand the customer: the intent is cancelled before it can take money, and declined. */
  async function declineChallenge(intent: Stripe.PaymentIntent, requestKey: string): Promise<ChargeResult> {
    await call(() =>
      stripe.paymentIntents.update(
        intent.id,
        { metadata: { [metadataKeys.declineReason]: 'authentication_required' } },
        { idempotencyKey: stripeIdempotencyKey('decline', requestKey) },
      ),
    );
    const ended = await cancelIntent(intent.id, requestKey);
    return (
      closedResultOf(ended) ?? {
        status: 'declined',
        reason: 'authentication_required',
      }
    );
  }

  async function settle(intent: Stripe.PaymentIntent, request: ChargeRequest): Promise<OpenChargeResult> {
    const state = paymentStateOf(intent);
    if (request.allowAction === true) {
      // A cancelled intent is an attempt that ended without money, as the opted-out caller hears it too.
      return state.status === 'canceled' ? closedResultOf(intent)! : state;
    }
    const closed = closedResultOf(intent);
    if (closed !== undefined) return closed;
    if (state.status === 'requires_action') return declineChallenge(intent, request.idempotencyKey);
    // Processing: the outcome is not known yet; the same key finds this intent again on the retry.
    throw new GatewayTimeoutError(`payment ${intent.id} is still processing at Stripe`);
  }

  async function charge<Request extends ChargeRequest>(request: Request): Promise<ChargeAnswer<Request>> {
    assertIdempotencyKey(request.idempotencyKey);
    assertValidAmount(request.amount);
    const earlier = await intentMadeWith(request.idempotencyKey);
    if (earlier !== undefined) {
      if (!sameCharge(earlier, request)) {
        throw new IdempotencyKeyConflictError('idempotency key already used for a different charge');
      }
      return (await settle(earlier, request)) as ChargeAnswer<Request>;
    }
    const created = await create(request);
    if (!('object' in created)) return created;
    return (await settle(created, request)) as ChargeAnswer<Request>;
  }

  async function chargeMadeWith(idempotencyKey: string): Promise<ChargeResult | undefined> {
    assertIdempotencyKey(idempotencyKey);
    const intent = await intentMadeWith(idempotencyKey);
    if (intent === undefined) return undefined;
    const closed = closedResultOf(intent);
    if (closed !== undefined) return closed;
    throw new GatewayTimeoutError(`payment ${intent.id} has not ended at Stripe yet`);
  }

  async function refund(request: RefundRequest): Promise<RefundResult> {
    assertIdempotencyKey(request.idempotencyKey);
    assertValidAmount(request.amount);
    let intent: Stripe.PaymentIntent;
    try {
      intent = await retrieve(request.transactionId);
    } catch (error) {
      if (error instanceof PaymentNotFoundError) {
        throw new RefundRejectedError('no charge with this transaction id', { cause: error });
      }
      throw error;
    }
    if (intent.status !== 'succeeded') {
      throw new RefundRejectedError(`a payment that did not succeed (${intent.status}) cannot be refunded`);
    }
    const refunds = await call(() =>
      stripe.refunds.list({ payment_intent: intent.id, limit: 100 }).autoPagingToArray({ limit: 10_000 }),
    );
    const existing = refunds.find(
      (candidate) => candidate.metadata?.[metadataKeys.idempotencyKey] === request.idempotencyKey,
    );
    if (existing !== undefined) {
      if (
        existing.amount !== request.amount.amountMinor ||
        existing.currency.toUpperCase() !== request.amount.currency
      ) {
        throw new IdempotencyKeyConflictError('idempotency key already used for a different refund');
      }
      return { refundId: existing.id };
    }
    if (intent.currency.toUpperCase() !== request.amount.currency) {
      throw new RefundRejectedError(`the charge was in ${intent.currency.toUpperCase()}`);
    }
    // A failed or cancelled refund gave its money back to what is left.
    const refunded = refunds
      .filter((candidate) => candidate.status !== 'failed' && candidate.status !== 'canceled')
      .reduce((sum, candidate) => sum + candidate.amount, 0);
    const remaining = intent.amount - refunded;
    if (request.amount.amountMinor > remaining) {
      throw new RefundRejectedError(
        `refund of ${request.amount.amountMinor} exceeds the ${remaining} left on the charge`,
      );
    }
    const bookingId = intent.metadata[metadataKeys.bookingId];
    try {
      const made = await call(() =>
        stripe.refunds.create(
          {
            payment_intent: intent.id,
            amount: request.amount.amountMinor,
            metadata: {
              [metadataKeys.idempotencyKey]: request.idempotencyKey,
              ...(bookingId !== undefined ? { [metadataKeys.bookingId]: bookingId } : {}),
            },
          },
          { idempotencyKey: stripeIdempotencyKey('refund', request.idempotencyKey) },
        ),
      );
      return { refundId: made.id };
    } catch (error) {
      // Stripe's own refusals (more than is left, a disputed charge): no retry changes them.
      if (error instanceof Stripe.errors.StripeInvalidRequestError) {
        throw new RefundRejectedError(`Stripe refused the refund: ${error.message}`, { cause: error });
      }
      throw error;
    }
  }

  async function paymentIntent(intentId: string): Promise<PaymentState> {
    return paymentStateOf(await retrieve(intentId));
  }

  /** Cancels the intent unless it has ended; one that ended between the look and the cancel is looked at again. */
  async function cancelIntent(intentId: string, requestKey: string): Promise<Stripe.PaymentIntent> {
    const intent = await retrieve(intentId);
    if (
      !['requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture'].includes(
        intent.status,
      )
    ) {
      return intent;
    }
    try {
      return await call(() =>
        stripe.paymentIntents.cancel(
          intentId,
          { expand: ['payment_method'] },
          { idempotencyKey: stripeIdempotencyKey('cancel', requestKey) },
        ),
      );
    } catch (error) {
      if (error instanceof Stripe.errors.StripeInvalidRequestError && !isMissing(error))
        return retrieve(intentId);
      throw error;
    }
  }

  async function cancelPayment(intentId: string, idempotencyKey: string): Promise<PaymentState> {
    assertIdempotencyKey(idempotencyKey);
    return paymentStateOf(await cancelIntent(intentId, idempotencyKey));
  }

  /**
   * Pages through a list made at or after `since`. Stripe filters by `created` itself; localstripe takes no such
   * filter (and lists oldest first), so the items are filtered here as well and every page is read.
   */
  async function listedSince<Item extends { id: string; created: number }>(
    since: number,
    list: (page: { startingAfter?: string; created?: { gte: number } }) => Promise<Stripe.ApiList<Item>>,
  ): Promise<Item[]> {
    const found: Item[] = [];
    let startingAfter: string | undefined;
    for (let page = 0; page < maxRecentPages; page += 1) {
      const listed = await call(() =>
        list({
          ...(startingAfter !== undefined ? { startingAfter } : {}),
          ...(options.apiUrl === undefined ? { created: { gte: since } } : {}),
        }),
      );
      found.push(...listed.data.filter((item) => item.created >= since));
      const last = listed.data.at(-1);
      if (!listed.has_more || last === undefined) break;
      startingAfter = last.id;
    }
    return found;
  }

  async function recentPayments(since: Date): Promise<RecentPayments> {
    const from = Math.floor(since.getTime() / 1000);
    const [intents, refunds] = await Promise.all([
      listedSince(from, ({ startingAfter, created }) =>
        stripe.paymentIntents.list({
          limit: 100,
          ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}),
          ...(created !== undefined ? { created } : {}),
        }),
      ),
      listedSince(from, ({ startingAfter, created }) =>
        stripe.refunds.list({
          limit: 100,
          ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}),
          ...(created !== undefined ? { created } : {}),
        }),
      ),
    ]);
    return { intents: intents.map(processorIntentOf), refunds: refunds.map(processorRefundOf) };
  }

  return { charge, chargeMadeWith, refund, paymentIntent, cancelPayment, recentPayments };
}
