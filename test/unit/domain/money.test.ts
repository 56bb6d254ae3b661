// Money values: whole minor units in one ISO 4217 currency.
import { DomainError } from '../../../src/domain/errors';
import { money } from '../../../src/domain/money';

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
}

describe('money', () => {
  it('accepts exactly three upper-case letters as the currency', () => {
    expect(money(100, 'EUR')).toEqual({ amountMinor: 100, currency: 'EUR' });
    for (const currency of ['EURO', 'XEUR', 'EU', 'eur', ' EUR']) {
      expect(codeOf(() => money(100, currency))).toBe('INTERNAL');
    }
  });
});
