// Integer minor-unit money arithmetic that refuses to mix currencies or produce fractions.
import type { Money } from './booking';
import { DomainError } from './errors';

const currencyPattern = /^[A-Z]{3}$/;

export function money(amountMinor: number, currency: string): Money {
  if (!Number.isSafeInteger(amountMinor)) {
    throw new DomainError('INTERNAL', 'Money amounts are whole minor units');
  }
  if (!currencyPattern.test(currency)) {
    throw new DomainError('INTERNAL', 'Money currency must be an ISO 4217 code');
  }
  return { amountMinor, currency };
}

export function zeroMoney(currency: string): Money {
  return money(0, currency);
}

function assertSameCurrency(left: Money, right: Money): void {
  if (left.currency !== right.currency) {
    throw new DomainError('INTERNAL', `Cannot combine ${left.currency} with ${right.currency}`);
  }
}

export function addMoney(left: Money, right: Money): Money {
  assertSameCurrency(left, right);
  return money(left.amountMinor + right.amountMinor, left.currency);
}

export function subtractMoney(left: Money, right: Money): Money {
  assertSameCurrency(left, right);
  return money(left.amountMinor - right.amountMinor, left.currency);
}

export function sumMoney(amounts: readonly Money[], currency: string): Money {
  return amounts.reduce(addMoney, zeroMoney(currency));
}

export function isZeroMoney(amount: Money): boolean {
  return amount.amountMinor === 0;
}
