// ProcessPayment and RefundPayment: money moves through the PaymentGateway port, the booking's ledger rows follow.
import { log } from '@temporalio/activity';
import type { Knex } from 'knex';
import { approvedPaymentId, recordPayment, recordRefund } from '../db/payments';
import { tripStandingOfBooking, type BookingTripStanding } from '../db/trip-cancellations';
import {
  idempotencyKeyReused,
  notFound,
  paymentDeclined,
  validationFailed,
  type FieldViolation,
} from '../domain/errors';
import type { Money, PaymentAction } from '../domain/booking';
import { tripCancelledRefusal } from '../domain/trip-cancellation';
import { maxPaymentTokenLength } from '../domain/validation';
import {
  GatewayUnavailableError,
  IdempotencyKeyConflictError,
  PaymentNotFoundError,
  RefundRejectedError,
  type ChargeResult,
  type OpenChargeResult,
  type PaymentGateway,
  type PaymentProcessing,
  type PaymentRequiresAction,
  type PaymentState,
} from '../ports/payment-gateway';
import { createBusinessMetrics, type BusinessMetrics } from '../observability/metrics';
import type { FieldCipher } from '../security/field-encryption';
import { permanentFailure, transientFailure } from './failures';
import {
  businessFailure,
  type CancelPaymentInput,
  type PaymentActivities,
  type ProcessPaymentAnswer,
  type ProcessPaymentInput,
  type ReportPaymentIncidentInput,
  type SettlePaymentInput,
  type SettlePaymentResult,
  type RefundPaymentInput,
  type RefundPaymentResult,
} from './interface';

export interface PaymentActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
  paymentGateway: PaymentGateway;
  metrics?: BusinessMetrics;
}

function amountViolations(amount: Money | undefined): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (!amount || !Number.isSafeInteger(amount.amountMinor) || amount.amountMinor <= 0) {
    violations.push({
      field: 'amount.amount_minor',
      message: 'must be a positive whole number of minor units',
    });
  }
  if (!amount || !/^[A-Z]{3}$/.test(amount.currency)) {
    violations.push({ field: 'amount.currency', message: 'must be an ISO 4217 code' });
  }
  return violations;
}

function keyViolations(idempotencyKey: string): FieldViolation[] {
  return typeof idempotencyKey === 'string' && idempotencyKey.length > 0 && idempotencyKey.length <= 255
    ? []
    : [{ field: 'idempotency_key', message: 'must be 1 to 255 characters' }];
}

function rejectInvalid(violations: FieldViolation[]): void {
  if (violations.length > 0) throw businessFailure(validationFailed(violations));
}

/** Turns the port's errors into Temporal failures: unknown outcomes retry with the same key, the rest do not. */
function gatewayFailure(error: unknown): unknown {
  if (error instanceof GatewayUnavailableError) return transientFailure(error.name, error.message, error);
  if (error instanceof IdempotencyKeyConflictError) return businessFailure(idempotencyKeyReused());
  if (error instanceof RefundRejectedError) return permanentFailure('REFUND_REJECTED', error.message, error);
  if (error instanceof PaymentNotFoundError)
    return permanentFailure('PAYMENT_NOT_FOUND', error.message, error);
  return error;
}

/** An open answer of the processor as the booking shows it; the client secret travels only to the customer. */
export function paymentActionOf(open: PaymentRequiresAction | PaymentProcessing): PaymentAction {
  if (open.status === 'processing') return { status: 'PROCESSING', intentId: open.intentId };
  return {
    status: 'REQUIRES_ACTION',
    intentId: open.intentId,
    nextActionType: open.nextAction.type,
    ...(open.nextAction.redirectUrl === undefined ? {} : { redirectUrl: open.nextAction.redirectUrl }),
    clientSecret: open.clientSecret,
  };
}

export function createPaymentActivities(dependencies: PaymentActivityDependencies): PaymentActivities {
  const { database, cipher, paymentGateway } = dependencies;
  const metrics = dependencies.metrics ?? createBusinessMetrics();

  /**
   * Charges once per idempotency key (the gateway deduplicates) and records the attempt in `payments`.
   * A decline is non-retryable PAYMENT_DECLINED carrying the reason; a gateway outage is retried.
   */
  async function ProcessPayment(input: ProcessPaymentInput): Promise<ProcessPaymentAnswer> {
    const tokenViolations: FieldViolation[] =
      typeof input.paymentToken === 'string' &&
      input.paymentToken.length > 0 &&
      input.paymentToken.length <= maxPaymentTokenLength
        ? []
        : [{ field: 'payment_token', message: 'is required' }];
    rejectInvalid([
      ...amountViolations(input.amount),
      ...keyViolations(input.idempotencyKey),
      ...tokenViolations,
    ]);

    // No charge without a booking, nor for a trip the operator cancelled: both are read before any money moves.
    const trip = await tripStandingOfBooking(database, input.bookingId);
    if (trip === undefined) throw businessFailure(notFound('Booking', input.bookingId));
    const outcome: OpenChargeResult =
      trip.tripStatus === 'CANCELLED'
        ? await chargeMadeBeforeTheMark(input, trip)
        : await charge(input).catch((error: unknown) => {
            throw gatewayFailure(error);
          });
    // Nothing is written for an open payment: its outcome is, once CheckPayment or CancelPayment learns it.
    if (outcome.status === 'requires_action' || outcome.status === 'processing') {
      return { open: paymentActionOf(outcome), amount: input.amount };
    }
    await recordOutcome(input, outcome);
    if (outcome.status === 'declined') throw businessFailure(paymentDeclined(outcome.reason));
    return { transactionId: outcome.transactionId, methodMasked: outcome.methodMasked, amount: input.amount };
  }

  function charge(input: ProcessPaymentInput): Promise<OpenChargeResult> {
    const request = {
      idempotencyKey: input.idempotencyKey,
      amount: input.amount,
      paymentToken: input.paymentToken,
      description: `Bus booking ${input.bookingId}`,
      bookingId: input.bookingId,
    };
    return input.allowAction === true
      ? paymentGateway.charge({ ...request, allowAction: true as const })
      : paymentGateway.charge(request);
  }

  /** Writes an attempt's outcome to the ledger under its key, once. */
  async function recordOutcome(
    input: Pick<ProcessPaymentInput, 'bookingId' | 'idempotencyKey' | 'amount'>,
    outcome: ChargeResult,
  ): Promise<void> {
    const recorded = await recordPayment(database, {
      bookingId: input.bookingId,
      idempotencyKey: input.idempotencyKey,
      amountMinor: input.amount.amountMinor,
      currency: input.amount.currency,
      status: outcome.status === 'approved' ? 'APPROVED' : 'DECLINED',
      declineReason: outcome.status === 'declined' ? outcome.reason : null,
      gatewayTransactionId: outcome.status === 'approved' ? outcome.transactionId : null,
      methodMasked: outcome.status === 'approved' ? cipher.encrypt(outcome.methodMasked) : null,
    });
    // A new gateway result only: a retry gets the gateway's replay of it and finds its ledger row in place.
    if (recorded) metrics.payment(outcome.status);
  }

  /** The processor's state of an open payment, its outcome written to the ledger when it has one. */
  async function settled(input: SettlePaymentInput, state: PaymentState): Promise<SettlePaymentResult> {
    switch (state.status) {
      case 'requires_action':
      case 'processing': {
        // Asked again later, the secret is not the booking's to keep: the customer had it in the payment's answer.
        const { clientSecret: _secret, ...open } = paymentActionOf(state);
        return { outcome: 'OPEN', open };
      }
      case 'canceled':
        return { outcome: 'CANCELED' };
      case 'declined':
        await recordOutcome(input, state);
        return { outcome: 'DECLINED', reason: state.reason };
      case 'approved':
        await recordOutcome(input, state);
        return {
          outcome: 'APPROVED',
          transactionId: state.transactionId,
          methodMasked: state.methodMasked,
          amount: input.amount,
        };
    }
  }

  async function CheckPayment(input: SettlePaymentInput): Promise<SettlePaymentResult> {
    rejectInvalid([...amountViolations(input.amount), ...keyViolations(input.idempotencyKey)]);
    const state = await paymentGateway.paymentIntent(input.intentId).catch((error: unknown) => {
      throw gatewayFailure(error);
    });
    return settled(input, state);
  }

  async function CancelPayment(input: CancelPaymentInput): Promise<SettlePaymentResult> {
    rejectInvalid([...amountViolations(input.amount), ...keyViolations(input.cancelKey)]);
    const state = await paymentGateway
      .cancelPayment(input.intentId, input.cancelKey)
      .catch((error: unknown) => {
        throw gatewayFailure(error);
      });
    return settled(input, state);
  }

  /** A log line operators search for and a counter their alerts watch. */
  function ReportPaymentIncident(input: ReportPaymentIncidentInput): Promise<void> {
    metrics.paymentIncident(input.kind);
    log.warn('payment incident', {
      bookingId: input.bookingId,
      kind: input.kind,
      reference: input.reference,
      reason: input.reason,
    });
    return Promise.resolve();
  }

  /**
   * A retry may follow an attempt that charged before the trip's mark and lost the answer: that charge is answered
   * (the workflow refunds it when the cancelled trip refuses the seats), and no new one is made.
   */
  async function chargeMadeBeforeTheMark(
    input: ProcessPaymentInput,
    trip: BookingTripStanding,
  ): Promise<ChargeResult> {
    const earlier = await paymentGateway.chargeMadeWith(input.idempotencyKey).catch((error: unknown) => {
      throw gatewayFailure(error);
    });
    if (earlier === undefined)
      throw businessFailure(tripCancelledRefusal(trip.tripId, trip.cancellationReason));
    return earlier;
  }

  /** Refunds against a captured charge of this booking, once per idempotency key, and records it in `refunds`. */
  async function RefundPayment(input: RefundPaymentInput): Promise<RefundPaymentResult> {
    try {
      return await refund(input);
    } catch (error) {
      metrics.refund('failed');
      metrics.compensation('refund_payment', 'failed');
      throw error;
    }
  }

  async function refund(input: RefundPaymentInput): Promise<RefundPaymentResult> {
    rejectInvalid([...amountViolations(input.amount), ...keyViolations(input.idempotencyKey)]);
    const paymentId = await approvedPaymentId(database, {
      bookingId: input.bookingId,
      transactionId: input.transactionId,
    });
    if (paymentId === undefined) throw businessFailure(notFound('Payment', input.transactionId));

    const { refundId } = await paymentGateway
      .refund({
        idempotencyKey: input.idempotencyKey,
        transactionId: input.transactionId,
        amount: input.amount,
      })
      .catch((error: unknown) => {
        throw gatewayFailure(error);
      });

    const recorded = await recordRefund(database, {
      bookingId: input.bookingId,
      paymentId,
      idempotencyKey: input.idempotencyKey,
      amountMinor: input.amount.amountMinor,
      currency: input.amount.currency,
      gatewayRefundId: refundId,
    });
    if (recorded) {
      metrics.refund('succeeded', input.amount);
      metrics.compensation('refund_payment', 'succeeded');
    }
    return { refundId, amount: input.amount };
  }

  return {
    // One implementation answers both shapes; the open ones only to a request with allowAction.
    ProcessPayment: ProcessPayment as PaymentActivities['ProcessPayment'],
    RefundPayment,
    CheckPayment,
    CancelPayment,
    ReportPaymentIncident,
  };
}
