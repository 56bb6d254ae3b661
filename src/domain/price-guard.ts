// The price guard: a create or change that names the total the client showed goes ahead only at that total.
import type { Money, PriceBreakdown } from './booking';
import { DomainError, type JsonValue } from './errors';

function moneyJson(amount: Money): { amountMinor: number; currency: string } {
  return { amountMinor: amount.amountMinor, currency: amount.currency };
}

/** A breakdown as error details carry it: plain JSON, lines with their type and discount where they have them. */
export function priceBreakdownJson(breakdown: PriceBreakdown): { [key: string]: JsonValue } {
  return {
    lines: breakdown.lines.map((line) => ({
      passengerId: line.passengerId,
      seatNumber: line.seatNumber,
      fareClass: line.fareClass,
      amount: moneyJson(line.amount),
      ...(line.passengerType === undefined ? {} : { passengerType: line.passengerType }),
      ...(line.discount === undefined ? {} : { discount: moneyJson(line.discount) }),
    })),
    total: moneyJson(breakdown.total),
    ...(breakdown.discount === undefined
      ? {}
      : {
          discount: {
            code: breakdown.discount.code,
            kind: breakdown.discount.kind,
            value: breakdown.discount.value,
            amount: moneyJson(breakdown.discount.amount),
          },
        }),
  };
}

function formatted(amount: Money): string {
  return `${amount.amountMinor} ${amount.currency} minor units`;
}

/** PRICE_CHANGED: what the client expected, and the current total and breakdown to show instead. */
export function priceChanged(expected: Money, actual: PriceBreakdown): DomainError {
  return new DomainError(
    'PRICE_CHANGED',
    `The price is now ${formatted(actual.total)}, not the ${formatted(expected)} the request expected; nothing was held or charged`,
    {
      details: {
        expectedTotal: moneyJson(expected),
        currentTotal: moneyJson(actual.total),
        currentPrice: priceBreakdownJson(actual),
      },
    },
  );
}

/**
 * Nothing when the client named no total or named exactly the current one (amount and currency); PRICE_CHANGED
 * otherwise. Run it before anything is held or charged, on the price the request would pay.
 */
export function assertExpectedTotal(expected: Money | undefined, actual: PriceBreakdown): void {
  if (expected === undefined) return;
  if (expected.amountMinor === actual.total.amountMinor && expected.currency === actual.total.currency)
    return;
  throw priceChanged(expected, actual);
}
