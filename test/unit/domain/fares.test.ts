// Pricing, deltas, refund tiers at their boundaries, and the amount owed in each state (invariant 2).
import type { PriceBreakdown, RefundRule } from '../../../src/domain/booking';
import { DomainError } from '../../../src/domain/errors';
import {
  allocateRefund,
  amountOwedByState,
  assertFareClassesOnSale,
  cancellationRefund,
  defaultRefundRule,
  netAmountPaid,
  outstandingBalance,
  paymentStatusFor,
  priceBooking,
  priceDelta,
  refundOwed,
  refundPercent,
  settlementForChange,
} from '../../../src/domain/fares';
import { addMoney, isZeroMoney, money, subtractMoney, sumMoney, zeroMoney } from '../../../src/domain/money';
import { hourMs } from '../../../src/domain/time';
import {
  bookingState,
  confirmedState,
  departureTime,
  euros,
  farePrices,
  firstPassengerId,
  passengers,
  relativeToDeparture,
  secondPassengerId,
} from '../../support/booking-states';

function thrown(action: () => unknown): DomainError {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

const twoStandard = priceBooking(passengers, farePrices);

describe('money', () => {
  it('adds, subtracts and sums in one currency', () => {
    expect(addMoney(euros(100), euros(25))).toEqual(euros(125));
    expect(subtractMoney(euros(100), euros(125))).toEqual(euros(-25));
    expect(sumMoney([euros(1), euros(2), euros(3)], 'EUR')).toEqual(euros(6));
    expect(sumMoney([], 'EUR')).toEqual(zeroMoney('EUR'));
    expect(isZeroMoney(euros(0))).toBe(true);
  });

  it('refuses mixed currencies, fractions and bad currency codes', () => {
    expect(thrown(() => addMoney(euros(1), { amountMinor: 1, currency: 'USD' })).code).toBe('INTERNAL');
    expect(thrown(() => money(1.5, 'EUR')).code).toBe('INTERNAL');
    expect(thrown(() => money(1, 'euro')).code).toBe('INTERNAL');
  });
});

describe('priceBooking', () => {
  it('prices one line per passenger and totals them', () => {
    const price = priceBooking(
      [
        { id: firstPassengerId, seatNumber: '1A', fareClass: 'PREMIUM' },
        { id: secondPassengerId, seatNumber: '7C', fareClass: 'STANDARD' },
      ],
      farePrices,
    );
    expect(price).toEqual({
      lines: [
        { passengerId: firstPassengerId, seatNumber: '1A', fareClass: 'PREMIUM', amount: euros(4000) },
        { passengerId: secondPassengerId, seatNumber: '7C', fareClass: 'STANDARD', amount: euros(2500) },
      ],
      total: euros(6500),
    });
  });

  it('lists every passenger whose fare class the trip does not sell', () => {
    const standardOnly = { STANDARD: euros(2500) };
    const error = thrown(() =>
      priceBooking(
        [
          { id: firstPassengerId, seatNumber: '1A', fareClass: 'PREMIUM' },
          { id: secondPassengerId, seatNumber: '7C', fareClass: 'STANDARD' },
          { id: firstPassengerId, seatNumber: '1B', fareClass: 'PREMIUM' },
        ],
        standardOnly,
      ),
    );
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.fieldViolations.map((violation) => violation.field)).toEqual([
      'passengers[0].fare_class',
      'passengers[2].fare_class',
    ]);
  });

  it('checks that every requested fare class is on sale, naming each field that is not, before anything is priced', () => {
    const standardOnly = { STANDARD: euros(2500) };
    expect(() => assertFareClassesOnSale([{ fareClass: 'STANDARD' }], standardOnly)).not.toThrow();
    const error = thrown(() =>
      assertFareClassesOnSale(
        [{ fareClass: 'STANDARD' }, { fareClass: 'PREMIUM' }],
        standardOnly,
        (index) => `add_passengers[${index}].fare_class`,
      ),
    );
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.fieldViolations).toEqual([
      { field: 'add_passengers[1].fare_class', message: 'fare class PREMIUM is not sold on this trip' },
    ]);
  });

  it('refuses a trip priced in two currencies', () => {
    const mixed = { STANDARD: euros(2500), PREMIUM: { amountMinor: 4000, currency: 'USD' } };
    expect(thrown(() => priceBooking(passengers, mixed)).code).toBe('INTERNAL');
  });
});

describe('priceDelta and settlementForChange', () => {
  const upgraded: PriceBreakdown = priceBooking(
    [{ ...passengers[0], fareClass: 'PREMIUM', seatNumber: '1A' }, passengers[1]],
    farePrices,
  );
  const withAddedPassenger = priceBooking(
    [...passengers, { id: 'added', seatNumber: '3C', fareClass: 'STANDARD' }],
    farePrices,
  );

  it('charges the difference of an upgrade', () => {
    expect(priceDelta(twoStandard, upgraded)).toEqual(euros(1500));
    expect(settlementForChange('CONFIRMED', euros(1500))).toEqual({ kind: 'CHARGE', amount: euros(1500) });
  });

  it('refunds the difference of a downgrade', () => {
    expect(priceDelta(upgraded, twoStandard)).toEqual(euros(-1500));
    expect(settlementForChange('CONFIRMED', euros(-1500))).toEqual({ kind: 'REFUND', amount: euros(1500) });
  });

  it('charges a fare for an added passenger', () => {
    expect(priceDelta(twoStandard, withAddedPassenger)).toEqual(euros(2500));
  });

  it('only changes the amount due while payment is pending', () => {
    expect(settlementForChange('PENDING_PAYMENT', euros(2500))).toEqual({
      kind: 'AMOUNT_DUE_CHANGED',
      amount: euros(2500),
    });
    expect(settlementForChange('PENDING_PAYMENT', euros(-1500))).toEqual({
      kind: 'AMOUNT_DUE_CHANGED',
      amount: euros(1500),
    });
  });

  it('moves nothing when the price stays the same', () => {
    expect(priceDelta(twoStandard, twoStandard)).toEqual(euros(0));
    expect(settlementForChange('CONFIRMED', euros(0))).toEqual({ kind: 'NONE', amount: euros(0) });
  });

  it('refuses to settle a change of a terminal booking', () => {
    expect(thrown(() => settlementForChange('CANCELLED', euros(100))).code).toBe('INTERNAL');
  });
});

describe('refund rule', () => {
  const paid = { amountPaid: euros(5000), amountRefunded: euros(0), departureTime };
  const at = (offsetMs: number) => relativeToDeparture(offsetMs).toISOString();

  it('refunds everything until exactly 24 h before departure', () => {
    expect(refundOwed({ ...paid, cancelledAt: at(-48 * hourMs) })).toEqual(euros(5000));
    expect(refundOwed({ ...paid, cancelledAt: at(-24 * hourMs) })).toEqual(euros(5000));
  });

  it('refunds half from 1 ms after that until departure', () => {
    expect(refundOwed({ ...paid, cancelledAt: at(-24 * hourMs + 1) })).toEqual(euros(2500));
    expect(refundOwed({ ...paid, cancelledAt: at(-1) })).toEqual(euros(2500));
  });

  it('refunds nothing at or after departure', () => {
    expect(refundOwed({ ...paid, cancelledAt: at(0) })).toEqual(euros(0));
    expect(refundOwed({ ...paid, cancelledAt: at(hourMs) })).toEqual(euros(0));
  });

  it('rounds a partial refund down to the minor unit', () => {
    const odd = { amountPaid: euros(1001), amountRefunded: euros(0), departureTime };
    expect(refundOwed({ ...odd, cancelledAt: at(-hourMs) })).toEqual(euros(500));
  });

  it('refunds a share of the net amount paid, never money already returned', () => {
    const partlyRefunded = { amountPaid: euros(6500), amountRefunded: euros(1500), departureTime };
    expect(refundOwed({ ...partlyRefunded, cancelledAt: at(-hourMs) })).toEqual(euros(2500));
    const fullyRefunded = { amountPaid: euros(5000), amountRefunded: euros(5000), departureTime };
    expect(refundOwed({ ...fullyRefunded, cancelledAt: at(-48 * hourMs) })).toEqual(euros(0));
  });

  it('takes other fares’ rules as data', () => {
    const saver: RefundRule = {
      name: 'saver',
      tiers: [
        { minimumNoticeMs: 0, refundPercent: 0 },
        { minimumNoticeMs: 7 * 24 * hourMs, refundPercent: 75 },
      ],
      afterDepartureRefundPercent: 0,
    };
    expect(refundPercent(saver, departureTime, at(-8 * 24 * hourMs))).toBe(75);
    expect(refundPercent(saver, departureTime, at(-6 * 24 * hourMs))).toBe(0);
    const flexible: RefundRule = { name: 'flexible', tiers: [], afterDepartureRefundPercent: 20 };
    expect(refundPercent(flexible, departureTime, at(hourMs))).toBe(20);
    expect(refundPercent(flexible, departureTime, at(-hourMs))).toBe(0);
  });

  it('rejects a rule with a percentage that is not a whole 0–100', () => {
    const broken: RefundRule = {
      name: 'broken',
      tiers: [{ minimumNoticeMs: 0, refundPercent: 120 }],
      afterDepartureRefundPercent: 0,
    };
    expect(thrown(() => refundOwed({ ...paid, cancelledAt: at(-hourMs), rule: broken })).code).toBe(
      'INTERNAL',
    );
  });

  it('is the product’s default rule: full refund until 24 h before departure, half until departure', () => {
    expect(defaultRefundRule.tiers).toEqual([
      { minimumNoticeMs: 24 * hourMs, refundPercent: 100 },
      { minimumNoticeMs: 0, refundPercent: 50 },
    ]);
    expect(defaultRefundRule.afterDepartureRefundPercent).toBe(0);
  });
});

describe('cancellationRefund', () => {
  it('refunds a confirmed booking per its rule, and nothing for an unpaid one', () => {
    const cancelledAt = relativeToDeparture(-hourMs).toISOString();
    expect(cancellationRefund(confirmedState(), cancelledAt)).toEqual(euros(2500));
    expect(cancellationRefund(bookingState(), cancelledAt)).toEqual(euros(0));
  });
});

describe('allocateRefund', () => {
  const charges = [
    { transactionId: 'first', amount: euros(5000), refunded: euros(0) },
    { transactionId: 'second', amount: euros(1500), refunded: euros(0) },
  ];

  it('takes a refund from the newest charge first, then the older ones', () => {
    expect(allocateRefund(charges, euros(4000))).toEqual([
      { transactionId: 'second', amount: euros(1500) },
      { transactionId: 'first', amount: euros(2500) },
    ]);
    expect(allocateRefund(charges, euros(1000))).toEqual([{ transactionId: 'second', amount: euros(1000) }]);
  });

  it('gives back only what each charge has left, and never more than was captured', () => {
    const partlyRefunded = [charges[0], { ...charges[1], refunded: euros(1500) }];
    expect(allocateRefund(partlyRefunded, euros(9000))).toEqual([
      { transactionId: 'first', amount: euros(5000) },
    ]);
  });

  it('refunds nothing for a zero refund or when nothing was captured', () => {
    expect(allocateRefund(charges, euros(0))).toEqual([]);
    expect(allocateRefund([], euros(1000))).toEqual([]);
  });

  it('refuses to refund in another currency than the charge', () => {
    expect(thrown(() => allocateRefund(charges, money(100, 'USD'))).code).toBe('INTERNAL');
  });
});

describe('amountOwedByState (invariant 2)', () => {
  const lateCancellation = relativeToDeparture(-hourMs).toISOString();
  const earlyCancellation = relativeToDeparture(-48 * hourMs).toISOString();

  it('owes nothing while pending or after expiry', () => {
    expect(amountOwedByState(bookingState())).toEqual(euros(0));
    expect(amountOwedByState(bookingState({ status: 'EXPIRED' }))).toEqual(euros(0));
  });

  it('owes the price once confirmed or completed', () => {
    expect(amountOwedByState(confirmedState())).toEqual(euros(5000));
    expect(amountOwedByState(confirmedState({ status: 'COMPLETED' }))).toEqual(euros(5000));
  });

  it('owes nothing for a booking cancelled before payment', () => {
    expect(amountOwedByState(bookingState({ status: 'CANCELLED', cancelledAt: lateCancellation }))).toEqual(
      euros(0),
    );
  });

  it('owes what the refund rule let the operator keep for a paid booking cancelled', () => {
    expect(
      amountOwedByState(confirmedState({ status: 'CANCELLED', cancelledAt: earlyCancellation })),
    ).toEqual(euros(0));
    expect(amountOwedByState(confirmedState({ status: 'CANCELLED', cancelledAt: lateCancellation }))).toEqual(
      euros(2500),
    );
  });

  it('keeps the operator’s rounding: 50% of 1 001 keeps 501', () => {
    const state = confirmedState({
      status: 'CANCELLED',
      cancelledAt: lateCancellation,
      price: { lines: [], total: euros(1001) },
    });
    expect(amountOwedByState(state)).toEqual(euros(501));
  });

  it('balances to zero when the money moved matches the state', () => {
    const confirmed = confirmedState();
    expect(outstandingBalance(confirmed)).toEqual(euros(0));
    const refund = cancellationRefund(confirmed, lateCancellation);
    const cancelled = confirmedState({
      status: 'CANCELLED',
      cancelledAt: lateCancellation,
      amountRefunded: refund,
    });
    expect(netAmountPaid(cancelled)).toEqual(euros(2500));
    expect(outstandingBalance(cancelled)).toEqual(euros(0));
  });

  it('shows a missing charge as positive and a missing refund as negative', () => {
    expect(outstandingBalance(confirmedState({ amountPaid: euros(0) }))).toEqual(euros(5000));
    expect(outstandingBalance(bookingState({ status: 'EXPIRED', amountPaid: euros(5000) }))).toEqual(
      euros(-5000),
    );
  });

  it('owes what was kept of passengers cancelled out of the booking beside its remaining lines', () => {
    const confirmed = confirmedState();
    const [kept, leaving] = confirmed.price.lines;
    const afterPartialCancel = confirmedState({
      passengers: confirmed.passengers.filter((passenger) => passenger.id === kept.passengerId),
      price: { lines: [kept], total: kept.amount },
      amountRefunded: euros(1250),
      cancelledPassengers: [
        {
          passengerId: leaving.passengerId,
          cancelledAt: lateCancellation,
          paid: euros(2500),
          refund: euros(1250),
        },
      ],
    });
    expect(amountOwedByState(afterPartialCancel)).toEqual(euros(3750));
    expect(outstandingBalance(afterPartialCancel)).toEqual(euros(0));
    // The rule then applies to the rest only: what was kept of the cancelled passenger is settled.
    const refund = cancellationRefund(afterPartialCancel, lateCancellation);
    expect(refund).toEqual(euros(1250));
    const cancelled = {
      ...afterPartialCancel,
      status: 'CANCELLED' as const,
      cancelledAt: lateCancellation,
      amountRefunded: addMoney(afterPartialCancel.amountRefunded, refund),
    };
    expect(amountOwedByState(cancelled)).toEqual(euros(2500));
    expect(outstandingBalance(cancelled)).toEqual(euros(0));
  });

  it('needs the cancellation instant of a paid cancelled booking', () => {
    expect(thrown(() => amountOwedByState(confirmedState({ status: 'CANCELLED' }))).code).toBe('INTERNAL');
  });
});

describe('paymentStatusFor', () => {
  it.each([
    [0, 0, false, 'NONE'],
    [0, 0, true, 'DECLINED'],
    [5000, 0, false, 'CAPTURED'],
    [6500, 1500, false, 'PARTIALLY_REFUNDED'],
    [5000, 5000, false, 'REFUNDED'],
  ])('paid %d, refunded %d, declined %s → %s', (paid, refunded, declined, status) => {
    expect(
      paymentStatusFor({
        amountPaid: euros(paid),
        amountRefunded: euros(refunded),
        lastAttemptDeclined: declined,
      }),
    ).toBe(status);
  });
});

describe('refund rule limits', () => {
  const cancelledAt = relativeToDeparture(-hourMs).toISOString();

  it.each([12.5, -10])(
    'rejects a rule granting %s percent: percentages are whole numbers from 0',
    (percent) => {
      const broken: RefundRule = {
        name: 'broken',
        tiers: [{ minimumNoticeMs: 0, refundPercent: percent }],
        afterDepartureRefundPercent: 0,
      };
      const paid = { amountPaid: euros(5000), amountRefunded: euros(0), departureTime, cancelledAt };
      expect(thrown(() => refundOwed({ ...paid, rule: broken })).code).toBe('INTERNAL');
    },
  );

  it('owes no refund, never a negative one, when more was given back than was paid', () => {
    expect(
      refundOwed({ amountPaid: euros(5000), amountRefunded: euros(6000), departureTime, cancelledAt }),
    ).toEqual(euros(0));
  });

  it('names the default rule standard-flexible, the name bookings record', () => {
    expect(defaultRefundRule.name).toBe('standard-flexible');
  });
});
