// The booking's money: the payments captured, the refunds made against them, and how both show in the booking.
import { isOpenPayment, type OpenPaymentResult, type ProcessPaymentResult } from '../activities/interface';
import type { BookingState, Money, PaymentAttempt, Timestamp } from '../domain/booking';
import type { DomainError } from '../domain/errors';
import { allocateRefund, paymentStatusFor, type CapturedCharge } from '../domain/fares';
import { addMoney, zeroMoney } from '../domain/money';
import type { BookingSteps } from './booking-steps';

/** The payments captured for one booking; refunds are taken from the newest first, each with its own key. */
export class CapturedPayments {
  private charges: CapturedCharge[] = [];
  private refundsIssued = 0;
  /** The token the booking was paid with, charged again for the price difference of a change. */
  private lastPaymentToken: string | undefined;

  constructor(private readonly steps: Pick<BookingSteps, 'processPayment' | 'refundPayment'>) {}

  get paymentToken(): string | undefined {
    return this.lastPaymentToken;
  }

  async charge(attemptNumber: number, amount: Money, paymentToken: string): Promise<ProcessPaymentResult> {
    const charge = await this.steps.processPayment(attemptNumber, amount, paymentToken);
    this.lastPaymentToken = paymentToken;
    const { transactionId } = charge;
    this.charges.push({ transactionId, amount: charge.amount, refunded: zeroMoney(charge.amount.currency) });
    return charge;
  }

  /** A charge that may stay open (the customer's challenge): only a captured one joins the booking's charges. */
  async start(
    startPayment: BookingSteps['startPayment'],
    attemptNumber: number,
    amount: Money,
    paymentToken: string,
  ): Promise<ProcessPaymentResult | OpenPaymentResult> {
    const answer = await startPayment(attemptNumber, amount, paymentToken);
    this.lastPaymentToken = paymentToken;
    if (!isOpenPayment(answer)) this.captured(answer);
    return answer;
  }

  /** An open payment that the processor has since captured, as CheckPayment or CancelPayment found it. */
  captured(charge: ProcessPaymentResult): void {
    const { transactionId } = charge;
    this.charges.push({ transactionId, amount: charge.amount, refunded: zeroMoney(charge.amount.currency) });
  }

  /** Gives back `amount` (no more than was captured); `refunded` hears of each refund as soon as it is made. */
  async refund(amount: Money, refunded: (amount: Money) => void): Promise<void> {
    for (const portion of allocateRefund(this.charges, amount)) {
      this.refundsIssued += 1;
      const result = await this.steps.refundPayment(this.refundsIssued, portion);
      this.charges = this.charges.map((charge) =>
        charge.transactionId === portion.transactionId
          ? { ...charge, refunded: addMoney(charge.refunded, result.amount) }
          : charge,
      );
      refunded(result.amount);
    }
  }
}

interface AttemptFacts {
  attemptNumber: number;
  attemptedAt: Timestamp;
  amount: Money;
}

/** An approved charge: the amount paid grows, the attempt is listed, the summary shows the method used. */
export function withApprovedPayment(
  booking: BookingState,
  attempt: AttemptFacts & { method: string },
): BookingState {
  const amountPaid = addMoney(booking.amountPaid, attempt.amount);
  const approved: PaymentAttempt = {
    attemptNumber: attempt.attemptNumber,
    attemptedAt: attempt.attemptedAt,
    outcome: 'APPROVED',
    amount: attempt.amount,
    method: attempt.method,
  };
  return {
    ...booking,
    amountPaid,
    payment: {
      status: paymentStatusFor({
        amountPaid,
        amountRefunded: booking.amountRefunded,
        lastAttemptDeclined: false,
      }),
      method: attempt.method,
      lastAttemptAt: attempt.attemptedAt,
    },
    paymentAttempts: [...booking.paymentAttempts, approved],
  };
}

/** The gateway's reason when it gave one, else the error's own message. */
export function declineReasonOf(error: DomainError): string {
  return typeof error.details.declineReason === 'string' ? error.details.declineReason : error.message;
}

/** A declined charge moves no money: the attempt and its reason are listed, the summary shows the decline. */
export function declinedPaymentChanges(
  booking: BookingState,
  attempt: AttemptFacts & { declineReason: string },
): Pick<BookingState, 'payment' | 'paymentAttempts'> {
  const declined: PaymentAttempt = {
    attemptNumber: attempt.attemptNumber,
    attemptedAt: attempt.attemptedAt,
    outcome: 'DECLINED',
    amount: attempt.amount,
    declineReason: attempt.declineReason,
  };
  return {
    payment: {
      ...booking.payment,
      status: paymentStatusFor({
        amountPaid: booking.amountPaid,
        amountRefunded: booking.amountRefunded,
        lastAttemptDeclined: true,
      }),
      lastAttemptAt: attempt.attemptedAt,
      declineReason: attempt.declineReason,
    },
    paymentAttempts: [...booking.paymentAttempts, declined],
  };
}

/** A refund made: the amount refunded grows and the summary follows (partly or fully refunded). */
export function withRefund(booking: BookingState, refunded: Money): BookingState {
  const amountRefunded = addMoney(booking.amountRefunded, refunded);
  return {
    ...booking,
    amountRefunded,
    payment: {
      ...booking.payment,
      status: paymentStatusFor({
        amountPaid: booking.amountPaid,
        amountRefunded,
        lastAttemptDeclined: false,
      }),
    },
  };
}
