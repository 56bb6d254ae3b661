// Discount codes: creation input, when a code is redeemable, and the discount spread over the lines to the unit.
import type { PriceBreakdown } from '../../../src/domain/booking';
import {
  applyDiscount,
  assertRedeemable,
  discountAmount,
  distributeLargestRemainder,
  normaliseDiscountCode,
  releasesDiscount,
  validateDiscountCodeInput,
  type DiscountCode,
} from '../../../src/domain/discount-codes';
import { DomainError } from '../../../src/domain/errors';
import { priceBooking } from '../../../src/domain/fares';
import { priceParty, defaultPassengerTypes } from '../../../src/domain/passenger-types';
import { euros, farePrices, passengers } from '../../support/booking-states';

function thrown(action: () => unknown): DomainError {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

const now = '2026-11-01T09:00:00.000Z';
const routeId = '66666666-6666-4666-8666-666666666666';
const otherRouteId = '77777777-7777-4777-8777-777777777777';

const validInput = {
  code: ' summer-26 ',
  kind: 'percent',
  value: 10,
  validFrom: '2026-11-01T00:00:00Z',
  validUntil: '2026-12-31T23:00:00+01:00',
  routeIds: [routeId.toUpperCase()],
  maxUsages: 10,
};

const percentCode: DiscountCode = {
  code: 'SUMMER-26',
  kind: 'percent',
  value: 10,
  validFrom: '2026-11-01T00:00:00.000Z',
  validUntil: '2026-12-31T22:00:00.000Z',
  routeIds: [routeId],
  maxUsages: 10,
  usages: 0,
};

const amountCode: DiscountCode = {
  ...percentCode,
  code: 'FIVE-OFF',
  kind: 'amount',
  value: 500,
  currency: 'EUR',
  routeIds: [],
};

describe('validateDiscountCodeInput', () => {
  it('normalises the code, the instants and the route ids', () => {
    expect(validateDiscountCodeInput(validInput, now)).toEqual({
      code: 'SUMMER-26',
      kind: 'percent',
      value: 10,
      validFrom: '2026-11-01T00:00:00.000Z',
      validUntil: '2026-12-31T22:00:00.000Z',
      routeIds: [routeId],
      maxUsages: 10,
    });
    expect(normaliseDiscountCode(' ab-12 ')).toBe('AB-12');
  });

  it('keeps the currency of an amount and makes no routes mean every route', () => {
    expect(
      validateDiscountCodeInput(
        { ...validInput, kind: 'amount', value: 500, currency: 'EUR', routeIds: undefined },
        now,
      ),
    ).toMatchObject({ kind: 'amount', value: 500, currency: 'EUR', routeIds: [] });
  });

  it('lists every bad field', () => {
    const error = thrown(() =>
      validateDiscountCodeInput(
        {
          code: 'NO',
          kind: 'free',
          validFrom: 'tomorrow',
          validUntil: '2026-10-01T00:00:00Z',
          routeIds: ['not-a-uuid', routeId, routeId],
          maxUsages: 0,
        },
        now,
      ),
    );
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.fieldViolations).toEqual([
      { field: 'code', message: 'must be 4 to 32 letters, digits or -, such as SUMMER-26' },
      { field: 'kind', message: 'must be one of amount, percent' },
      { field: 'valid_from', message: 'must be an RFC 3339 date and time such as 2026-12-01T00:00:00Z' },
      { field: 'valid_until', message: 'must be in the future (it is 2026-11-01T09:00:00.000Z)' },
      { field: 'route_ids[0]', message: 'must be a UUID' },
      { field: 'route_ids[2]', message: 'this route appears more than once' },
      { field: 'max_usages', message: 'must be a whole number from 1 to 1000000' },
    ]);
  });

  it.each<[Record<string, unknown>, { field: string; message: string }]>([
    [{ value: 0 }, { field: 'value', message: 'must be a whole number from 1 to 100' }],
    [{ value: 101 }, { field: 'value', message: 'must be a whole number from 1 to 100' }],
    [{ value: 12.5 }, { field: 'value', message: 'must be a whole number from 1 to 100' }],
    [{ currency: 'EUR' }, { field: 'currency', message: 'must be absent for a percent' }],
    [
      { kind: 'amount', value: 500 },
      { field: 'currency', message: 'is required for an amount: an ISO 4217 code such as EUR' },
    ],
    [
      { kind: 'amount', value: 500, currency: 'eur' },
      {
        field: 'currency',
        message: 'is required for an amount: an ISO 4217 code such as EUR',
      },
    ],
    [
      { kind: 'amount', value: -5, currency: 'EUR' },
      {
        field: 'value',
        message: 'must be a whole number from 1 to 10000000',
      },
    ],
    [{ validUntil: '2026-11-01T00:00:00Z' }, { field: 'valid_until', message: 'must come after valid_from' }],
    [
      { code: 'WAY-TOO-LONG-FOR-A-DISCOUNT-CODE-X' },
      {
        field: 'code',
        message: 'must be 4 to 32 letters, digits or -, such as SUMMER-26',
      },
    ],
    [
      { code: 'SUMMER_26' },
      { field: 'code', message: 'must be 4 to 32 letters, digits or -, such as SUMMER-26' },
    ],
    [{ routeIds: routeId }, { field: 'route_ids', message: 'must be a list of route ids' }],
    [{ maxUsages: '10' }, { field: 'max_usages', message: 'must be a whole number from 1 to 1000000' }],
  ])('refuses %p', (change, violation) => {
    expect(
      thrown(() => validateDiscountCodeInput({ ...validInput, ...change }, now)).fieldViolations,
    ).toEqual([violation]);
  });
});

describe('assertRedeemable', () => {
  const context = { routeId, at: '2026-11-15T12:00:00.000Z', currency: 'EUR' };
  const reasonOf = (code: DiscountCode | undefined, overrides: Partial<typeof context> = {}) => {
    const error = thrown(() =>
      assertRedeemable(code, { ...context, requestedCode: 'SUMMER-26', ...overrides }),
    );
    expect(error.code).toBe('DISCOUNT_CODE_INVALID');
    return { reason: error.details.reason, message: error.message };
  };

  it('lets a valid code through', () => {
    expect(() => assertRedeemable(percentCode, context)).not.toThrow();
    expect(() => assertRedeemable(amountCode, { ...context, routeId: otherRouteId })).not.toThrow();
    expect(() => assertRedeemable({ ...percentCode, usages: 9 }, context)).not.toThrow();
    expect(() => assertRedeemable(percentCode, { at: context.at })).not.toThrow();
  });

  it('says which rule a code breaks', () => {
    expect(reasonOf(undefined)).toEqual({
      reason: 'unknown',
      message: 'Discount code SUMMER-26 does not exist',
    });
    expect(reasonOf(percentCode, { at: '2026-10-31T23:59:59.999Z' })).toEqual({
      reason: 'not_yet_valid',
      message: 'Discount code SUMMER-26 is valid from 2026-11-01T00:00:00.000Z',
    });
    expect(reasonOf(percentCode, { at: '2026-12-31T22:00:00.000Z' })).toEqual({
      reason: 'expired',
      message: 'Discount code SUMMER-26 expired at 2026-12-31T22:00:00.000Z',
    });
    expect(reasonOf(percentCode, { routeId: otherRouteId })).toEqual({
      reason: 'wrong_route',
      message: 'Discount code SUMMER-26 is not valid on this route',
    });
    expect(reasonOf(amountCode, { currency: 'GBP' })).toEqual({
      reason: 'wrong_currency',
      message: 'Discount code FIVE-OFF is in EUR, this trip is priced in GBP',
    });
    expect(reasonOf({ ...percentCode, usages: 10 })).toEqual({
      reason: 'used_up',
      message: 'Discount code SUMMER-26 has been used up',
    });
  });

  it('is valid from its first instant, and the expiry beats being used up', () => {
    expect(() => assertRedeemable(percentCode, { ...context, at: percentCode.validFrom })).not.toThrow();
    expect(reasonOf({ ...percentCode, usages: 10 }, { at: '2027-01-01T00:00:00.000Z' }).reason).toBe(
      'expired',
    );
  });

  it('names the code in the details', () => {
    const error = thrown(() => assertRedeemable({ ...percentCode, usages: 10 }, context));
    expect(error.details).toEqual({ code: 'SUMMER-26', reason: 'used_up', maxUsages: '10' });
    expect(thrown(() => assertRedeemable(undefined, context)).message).toBe(
      'The discount code does not exist',
    );
  });

  it('gives a redemption back when the booking expires or is cancelled', () => {
    expect(releasesDiscount('EXPIRED')).toBe(true);
    expect(releasesDiscount('CANCELLED')).toBe(true);
    expect(releasesDiscount('CONFIRMED')).toBe(false);
    expect(releasesDiscount('COMPLETED')).toBe(false);
    expect(releasesDiscount('PENDING_PAYMENT')).toBe(false);
  });
});

describe('distributeLargestRemainder', () => {
  it('sums to the total, the largest remainders taking the units left', () => {
    expect(distributeLargestRemainder(100, [1, 1, 1])).toEqual([34, 33, 33]);
    expect(distributeLargestRemainder(10, [2500, 2500, 1250, 0])).toEqual([4, 4, 2, 0]);
    expect(distributeLargestRemainder(7, [1, 2])).toEqual([2, 5]);
    expect(distributeLargestRemainder(0, [5, 5])).toEqual([0, 0]);
    expect(distributeLargestRemainder(5, [0, 0])).toEqual([0, 0]);
  });

  it('always sums to the total and never exceeds a weight when the total does not exceed their sum', () => {
    const weights = [1999, 1, 777, 3333, 0, 12];
    const sum = weights.reduce((left, right) => left + right, 0);
    for (let total = 0; total <= sum; total += 97) {
      const parts = distributeLargestRemainder(total, weights);
      expect(parts.reduce((left, right) => left + right, 0)).toBe(total);
      parts.forEach((part, index) => expect(part).toBeLessThanOrEqual(weights[index]));
    }
  });
});

describe('applyDiscount', () => {
  const family: PriceBreakdown = priceParty(
    [
      { id: 'a1', seatNumber: '3A', fareClass: 'STANDARD', passengerType: 'ADULT' },
      { id: 'a2', seatNumber: '3B', fareClass: 'STANDARD', passengerType: 'ADULT' },
      { id: 'c1', seatNumber: '3C', fareClass: 'STANDARD', passengerType: 'CHILD' },
      { id: 'i1', fareClass: 'STANDARD', passengerType: 'INFANT' },
    ],
    farePrices,
    { types: defaultPassengerTypes, legCount: 1 },
  );

  it('takes a percentage off, shown per line, the lines summing to the total', () => {
    const discounted = applyDiscount(family, { ...percentCode, value: 15 });
    // 15 % of 62.50 is 9.375, rounded half up to 9.38 and shared 2500:2500:1250:0.
    expect(discounted.discount).toEqual({
      code: 'SUMMER-26',
      kind: 'percent',
      value: 15,
      amount: euros(938),
    });
    expect(discounted.lines.map((line) => [line.amount.amountMinor, line.discount?.amountMinor])).toEqual([
      [2125, 375],
      [2125, 375],
      [1062, 188],
      [0, 0],
    ]);
    expect(discounted.total).toEqual(euros(5312));
    expect(discounted.lines.map((line) => line.passengerType)).toEqual(['ADULT', 'ADULT', 'CHILD', 'INFANT']);
  });

  it('takes an amount off, never more than the fares', () => {
    const fiveOff = applyDiscount(priceBooking(passengers, farePrices), amountCode);
    expect(fiveOff.total).toEqual(euros(4500));
    expect(fiveOff.lines.map((line) => line.discount)).toEqual([euros(250), euros(250)]);
    const huge = applyDiscount(priceBooking(passengers, farePrices), { ...amountCode, value: 999_999 });
    expect(huge.total).toEqual(euros(0));
    expect(huge.discount?.amount).toEqual(euros(5000));
    expect(huge.lines.map((line) => line.amount)).toEqual([euros(0), euros(0)]);
  });

  it('rounds a percentage half up and spreads odd units by the largest remainder', () => {
    const three: PriceBreakdown = {
      lines: ['x', 'y', 'z'].map((passengerId) => ({
        passengerId,
        seatNumber: '1A',
        fareClass: 'STANDARD' as const,
        amount: euros(333),
      })),
      total: euros(999),
    };
    // 5 % of 9.99 is 0.4995: 50 cents, 16.67 each, the first two lines taking the units left.
    const discounted = applyDiscount(three, { ...percentCode, value: 5 });
    expect(discounted.discount?.amount).toEqual(euros(50));
    expect(discounted.lines.map((line) => line.discount?.amountMinor)).toEqual([17, 17, 16]);
    expect(discounted.total).toEqual(euros(949));
    expect(discountAmount({ ...percentCode, value: 100 }, euros(999))).toEqual(euros(999));
  });

  it('applies afresh to a breakdown that has a discount already', () => {
    const once = applyDiscount(family, percentCode);
    expect(applyDiscount(once, percentCode)).toEqual(once);
    expect(applyDiscount(once, amountCode)).toEqual(applyDiscount(family, amountCode));
  });

  it('refuses an amount in another currency', () => {
    const error = thrown(() => applyDiscount(family, { ...amountCode, currency: 'GBP' }));
    expect(error.code).toBe('DISCOUNT_CODE_INVALID');
    expect(error.details.reason).toBe('wrong_currency');
  });

  it('leaves a free booking free', () => {
    const free: PriceBreakdown = { lines: [], total: euros(0) };
    expect(applyDiscount(free, amountCode)).toEqual({
      lines: [],
      total: euros(0),
      discount: { code: 'FIVE-OFF', kind: 'amount', value: 500, amount: euros(0) },
    });
  });
});
