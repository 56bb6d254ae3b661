// The price guard: the client's total goes through only when it is the current price, amount and currency.
import { applyDiscount } from '../../../src/domain/discount-codes';
import { DomainError, type DomainErrorData } from '../../../src/domain/errors';
import { priceBooking } from '../../../src/domain/fares';
import { assertExpectedTotal, priceBreakdownJson } from '../../../src/domain/price-guard';
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

const price = priceBooking(passengers, farePrices);

describe('assertExpectedTotal', () => {
  it('lets the current total and a request without one through', () => {
    expect(() => assertExpectedTotal(euros(5000), price)).not.toThrow();
    expect(() => assertExpectedTotal(undefined, price)).not.toThrow();
  });

  it('answers PRICE_CHANGED with the current total and breakdown', () => {
    const error = thrown(() => assertExpectedTotal(euros(4500), price));
    expect(error.code).toBe('PRICE_CHANGED');
    expect(error.mapping).toMatchObject({ httpStatus: 409, grpcStatus: 'ABORTED' });
    expect(error.message).toBe(
      'The price is now 5000 EUR minor units, not the 4500 EUR minor units the request expected; nothing was held or charged',
    );
    expect(error.details).toEqual({
      expectedTotal: { amountMinor: 4500, currency: 'EUR' },
      currentTotal: { amountMinor: 5000, currency: 'EUR' },
      currentPrice: {
        lines: price.lines.map((line) => ({
          passengerId: line.passengerId,
          seatNumber: line.seatNumber,
          fareClass: 'STANDARD',
          amount: { amountMinor: 2500, currency: 'EUR' },
        })),
        total: { amountMinor: 5000, currency: 'EUR' },
      },
    });
  });

  it('refuses the same amount in another currency', () => {
    expect(thrown(() => assertExpectedTotal({ amountMinor: 5000, currency: 'USD' }, price)).code).toBe(
      'PRICE_CHANGED',
    );
  });

  it('shows a discount and passenger types in the details, and they survive JSON', () => {
    const discounted = applyDiscount(
      { ...price, lines: price.lines.map((line) => ({ ...line, passengerType: 'ADULT' })) },
      {
        code: 'FIVE-OFF',
        kind: 'amount',
        value: 500,
        currency: 'EUR',
      },
    );
    const error = thrown(() => assertExpectedTotal(euros(5000), discounted));
    expect(error.details.currentPrice).toEqual(priceBreakdownJson(discounted));
    expect(priceBreakdownJson(discounted)).toMatchObject({
      lines: [
        { passengerType: 'ADULT', amount: { amountMinor: 2250 }, discount: { amountMinor: 250 } },
        { passengerType: 'ADULT', amount: { amountMinor: 2250 }, discount: { amountMinor: 250 } },
      ],
      total: { amountMinor: 4500 },
      discount: {
        code: 'FIVE-OFF',
        kind: 'amount',
        value: 500,
        amount: { amountMinor: 500, currency: 'EUR' },
      },
    });
    expect(
      DomainError.fromJSON(JSON.parse(JSON.stringify(error.toJSON())) as DomainErrorData).details,
    ).toEqual(error.details);
  });
});
