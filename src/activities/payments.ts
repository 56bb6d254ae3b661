// ProcessPayment and RefundPayment: money moves through the PaymentGateway port, the booking's ledger rows follow.
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
import type { Money } from '../domain/booking';
import { tripCancelledRefusal } from '../domain/trip-cancellation';
import { maxPaymentTokenLength } from '../domain/validation';
import {
  GatewayUnavailableError,
  IdempotencyKeyConflictError,
  RefundRejectedError,
  type ChargeResult,
  type PaymentGateway,
} from '../ports/payment-gateway';
import { createBusinessMetrics, type BusinessMetrics } from '../observability/metrics';
import type { FieldCipher } from '../security/field-encryption';
import { permanentFailure, transientFailure } from './failures';
import {
  businessFailure,
  type PaymentActivities,
  type ProcessPaymentInput,
  type ProcessPaymentResult,
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
  return error;
}

export function createPaymentActivities(dependencies: PaymentActivityDependencies): PaymentActivities {
  const { database, cipher, paymentGateway } = dependencies;
  const metrics = dependencies.metrics ?? createBusinessMetrics();

  /**
   * Charges once per idempotency key (the gateway deduplicates) and records the attempt in `payments`.
   * A decline is non-retryable PAYMENT_DECLINED carrying the reason; a gateway outage is retried.
   */
  async function ProcessPayment(input: ProcessPaymentInput): Promise<ProcessPaymentResult> {
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
    const outcome =
      trip.tripStatus === 'CANCELLED'
        ? await chargeMadeBeforeTheMark(input, trip)
        : await paymentGateway
            .charge({
              idempotencyKey: input.idempotencyKey,
              amount: input.amount,
              paymentToken: input.paymentToken,
              description: `Bus booking ${input.bookingId}`,
              bookingId: input.bookingId,
            })
            .catch((error: unknown) => {
              throw gatewayFailure(error);
            });

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

    if (outcome.status === 'declined') throw businessFailure(paymentDeclined(outcome.reason));
    return { transactionId: outcome.transactionId, methodMasked: outcome.methodMasked, amount: input.amount };
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

  return { ProcessPayment, RefundPayment };
}
