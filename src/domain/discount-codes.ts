// Discount codes: what agents and admins may create, when a code may be redeemed, and how it lowers a price.
import type { AppliedDiscount, BookingStatus, Money, PriceBreakdown, PriceLine, Timestamp } from './booking';
import { DomainError, validationFailed, type FieldViolation } from './errors';
import { money, sumMoney } from './money';
import { timestampMs } from './time';
import { isUuid } from './validation';

export const discountKinds = ['amount', 'percent'] as const;
export type DiscountKind = (typeof discountKinds)[number];

export interface DiscountCode {
  /** Upper case, 4 to 32 of A–Z, 0–9 and `-`. */
  readonly code: string;
  readonly kind: DiscountKind;
  /** Minor units off the booking for `amount`, a whole percent (1–100) off for `percent`. */
  readonly value: number;
  /** The currency of an `amount` code; absent on a `percent` code. */
  readonly currency?: string;
  /** Redeemable from `validFrom` up to, not including, `validUntil`. */
  readonly validFrom: Timestamp;
  readonly validUntil: Timestamp;
  /** The routes the code is for; empty is every route. */
  readonly routeIds: readonly string[];
  readonly maxUsages: number;
  /** Redemptions not given back. */
  readonly usages: number;
}

/** A code as created: nothing redeemed yet. */
export type DiscountCodeDraft = Omit<DiscountCode, 'usages'>;

export const maxDiscountUsages = 1_000_000;
/** An amount code takes at most this off (minor units), a bound against typing errors. */
export const maxDiscountAmountMinor = 100_000_00;
const discountCodePattern = /^[A-Z0-9-]{4,32}$/;
const currencyPattern = /^[A-Z]{3}$/;
const instantPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Codes are typed by people: spaces around them are dropped and case does not matter. */
export function normaliseDiscountCode(text: string): string {
  return text.trim().toUpperCase();
}

export function isDiscountCode(value: unknown): value is string {
  return typeof value === 'string' && discountCodePattern.test(value);
}

/**
 * A code as a release rule: a redemption is given back when its booking ends without travelling, that is when it
 * expires unpaid or is cancelled (wholly; cancelling some passengers keeps it). A booking that completes keeps it.
 */
export function releasesDiscount(status: BookingStatus): boolean {
  return status === 'EXPIRED' || status === 'CANCELLED';
}

/** Wire shape of a code to create, camelCase; both fronts map their payload onto it. */
export interface DiscountCodeInputData {
  readonly code?: unknown;
  readonly kind?: unknown;
  readonly value?: unknown;
  readonly currency?: unknown;
  readonly validFrom?: unknown;
  readonly validUntil?: unknown;
  readonly routeIds?: unknown;
  readonly maxUsages?: unknown;
}

function readInstant(value: unknown, field: string, violations: FieldViolation[]): number | undefined {
  if (typeof value !== 'string' || !instantPattern.test(value) || Number.isNaN(Date.parse(value))) {
    violations.push({ field, message: 'must be an RFC 3339 date and time such as 2026-12-01T00:00:00Z' });
    return undefined;
  }
  return Date.parse(value);
}

function readWholeNumber(
  value: unknown,
  field: string,
  minimum: number,
  maximum: number,
  violations: FieldViolation[],
): number | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) {
    violations.push({ field, message: `must be a whole number from ${minimum} to ${maximum}` });
    return undefined;
  }
  return value;
}

/**
 * A code an agent or admin asks to create, checked at `now`: every bad field in one VALIDATION_FAILED. The code is
 * normalised to upper case; route ids are lower-cased and each may appear once; a code must still be valid after
 * `now`.
 */
export function validateDiscountCodeInput(input: DiscountCodeInputData, now: Timestamp): DiscountCodeDraft {
  const violations: FieldViolation[] = [];
  const code = typeof input.code === 'string' ? normaliseDiscountCode(input.code) : undefined;
  if (!isDiscountCode(code)) {
    violations.push({ field: 'code', message: 'must be 4 to 32 letters, digits or -, such as SUMMER-26' });
  }
  const kind = discountKinds.find((candidate) => candidate === input.kind);
  if (kind === undefined) violations.push({ field: 'kind', message: 'must be one of amount, percent' });
  const value =
    kind === 'percent'
      ? readWholeNumber(input.value, 'value', 1, 100, violations)
      : kind === 'amount'
        ? readWholeNumber(input.value, 'value', 1, maxDiscountAmountMinor, violations)
        : undefined;
  const currencyGiven = input.currency !== undefined && input.currency !== null && input.currency !== '';
  if (kind === 'amount' && !(typeof input.currency === 'string' && currencyPattern.test(input.currency))) {
    violations.push({
      field: 'currency',
      message: 'is required for an amount: an ISO 4217 code such as EUR',
    });
  }
  if (kind === 'percent' && currencyGiven) {
    violations.push({ field: 'currency', message: 'must be absent for a percent' });
  }
  const validFrom = readInstant(input.validFrom, 'valid_from', violations);
  const validUntil = readInstant(input.validUntil, 'valid_until', violations);
  if (validFrom !== undefined && validUntil !== undefined && validUntil <= validFrom) {
    violations.push({ field: 'valid_until', message: 'must come after valid_from' });
  } else if (validUntil !== undefined && validUntil <= timestampMs(now)) {
    violations.push({ field: 'valid_until', message: `must be in the future (it is ${now})` });
  }
  const routeIds: string[] = [];
  if (input.routeIds !== undefined && input.routeIds !== null) {
    if (!Array.isArray(input.routeIds)) {
      violations.push({ field: 'route_ids', message: 'must be a list of route ids' });
    } else {
      (input.routeIds as unknown[]).forEach((routeId, index) => {
        if (!isUuid(routeId)) {
          violations.push({ field: `route_ids[${index}]`, message: 'must be a UUID' });
        } else if (routeIds.includes(routeId.toLowerCase())) {
          violations.push({ field: `route_ids[${index}]`, message: 'this route appears more than once' });
        } else {
          routeIds.push(routeId.toLowerCase());
        }
      });
    }
  }
  const maxUsages = readWholeNumber(input.maxUsages, 'max_usages', 1, maxDiscountUsages, violations);
  if (violations.length > 0) throw validationFailed(violations);
  return {
    code: code as string,
    kind: kind as DiscountKind,
    value: value as number,
    ...(kind === 'amount' ? { currency: input.currency as string } : {}),
    validFrom: new Date(validFrom as number).toISOString(),
    validUntil: new Date(validUntil as number).toISOString(),
    routeIds,
    maxUsages: maxUsages as number,
  };
}

// ---- Redeeming ----

export const discountCodeInvalidReasons = [
  'unknown',
  'not_yet_valid',
  'expired',
  'wrong_route',
  'wrong_currency',
  'used_up',
  'released',
] as const;
export type DiscountCodeInvalidReason = (typeof discountCodeInvalidReasons)[number];

/** DISCOUNT_CODE_INVALID; `details.reason` says why and `details.code` which code. */
export function discountCodeInvalid(
  code: string,
  reason: DiscountCodeInvalidReason,
  message: string,
  details: Readonly<Record<string, string>> = {},
): DomainError {
  return new DomainError('DISCOUNT_CODE_INVALID', message, { details: { code, reason, ...details } });
}

/** DISCOUNT_CODE_INVALID for a code there is none of (`requested` as the request gave it, or empty). */
export function unknownDiscountCode(requested: string): DomainError {
  const named = requested === '' ? 'The discount code' : `Discount code ${requested}`;
  return discountCodeInvalid(requested, 'unknown', `${named} does not exist`);
}

export interface RedemptionContext {
  /** The code as the request gave it, for the error when none is found. */
  readonly requestedCode?: string;
  /** The booking's route; absent, the route is not checked. */
  readonly routeId?: string;
  readonly at: Timestamp;
  /** The booking's currency: an amount code in another currency does not apply. */
  readonly currency?: string;
}

/**
 * Throws DISCOUNT_CODE_INVALID unless `code` (undefined when none was found) may be redeemed on `routeId` at `at`,
 * checked in this order: unknown, not yet valid, expired, another route, another currency, used up.
 */
export function assertRedeemable(
  code: DiscountCode | undefined,
  context: RedemptionContext,
): asserts code is DiscountCode {
  if (code === undefined) throw unknownDiscountCode(context.requestedCode ?? '');
  const at = timestampMs(context.at);
  if (at < timestampMs(code.validFrom)) {
    throw discountCodeInvalid(
      code.code,
      'not_yet_valid',
      `Discount code ${code.code} is valid from ${code.validFrom}`,
      {
        validFrom: code.validFrom,
      },
    );
  }
  if (at >= timestampMs(code.validUntil)) {
    throw discountCodeInvalid(
      code.code,
      'expired',
      `Discount code ${code.code} expired at ${code.validUntil}`,
      {
        validUntil: code.validUntil,
      },
    );
  }
  const routeId = context.routeId?.toLowerCase();
  if (routeId !== undefined && code.routeIds.length > 0 && !code.routeIds.includes(routeId)) {
    throw discountCodeInvalid(
      code.code,
      'wrong_route',
      `Discount code ${code.code} is not valid on this route`,
    );
  }
  if (code.kind === 'amount' && context.currency !== undefined && code.currency !== context.currency) {
    throw discountCodeInvalid(
      code.code,
      'wrong_currency',
      `Discount code ${code.code} is in ${code.currency}, this trip is priced in ${context.currency}`,
    );
  }
  if (code.usages >= code.maxUsages) {
    throw discountCodeInvalid(code.code, 'used_up', `Discount code ${code.code} has been used up`, {
      maxUsages: String(code.maxUsages),
    });
  }
}

// ---- Applying ----

/** A line's fare before any discount: what it pays plus what a discount took off it. */
function grossOf(line: PriceLine): number {
  return line.amount.amountMinor + (line.discount?.amountMinor ?? 0);
}

/**
 * `total` split over `weights` in proportion, in whole units: each gets the floor of its share and the units left
 * go one each to the largest remainders (the earlier line on a tie), so the parts always sum to `total`.
 */
export function distributeLargestRemainder(total: number, weights: readonly number[]): number[] {
  const weightSum = weights.reduce((sum, weight) => sum + weight, 0);
  if (weightSum === 0 || total === 0) return weights.map(() => 0);
  const exact = weights.map((weight) => (total * weight) / weightSum);
  const parts = exact.map((value) => Math.floor(value));
  let left = total - parts.reduce((sum, part) => sum + part, 0);
  const byRemainder = exact
    .map((value, index) => ({ index, remainder: value - parts[index] }))
    .sort((first, second) => second.remainder - first.remainder || first.index - second.index);
  for (const { index } of byRemainder) {
    if (left <= 0) break;
    parts[index] += 1;
    left -= 1;
  }
  return parts;
}

/**
 * What the code takes off a booking whose fares add up to `gross`: its amount (never more than the fares), or its
 * percentage rounded half up to the minor unit.
 */
export function discountAmount(
  code: Pick<DiscountCode, 'code' | 'kind' | 'value' | 'currency'>,
  gross: Money,
): Money {
  if (code.kind === 'amount') {
    if (code.currency !== gross.currency) {
      throw discountCodeInvalid(
        code.code,
        'wrong_currency',
        `Discount code ${code.code} is in ${code.currency}, this trip is priced in ${gross.currency}`,
      );
    }
    return money(Math.min(code.value, gross.amountMinor), gross.currency);
  }
  return money(Math.floor((gross.amountMinor * code.value + 50) / 100), gross.currency);
}

/**
 * The breakdown with the code applied: the discount shared over the lines in proportion to their fares (largest
 * remainder, so the lines' discounts add up to the booking's), each line's amount what is left to pay. Applied to a
 * breakdown that already has a discount it starts again from the fares before it, so a repriced booking gets its
 * code applied afresh.
 */
export function applyDiscount(
  breakdown: PriceBreakdown,
  code: Pick<DiscountCode, 'code' | 'kind' | 'value' | 'currency'>,
): PriceBreakdown {
  const currency = breakdown.total.currency;
  const grosses = breakdown.lines.map(grossOf);
  const gross = money(
    grosses.reduce((sum, amount) => sum + amount, 0),
    currency,
  );
  const discount = discountAmount(code, gross);
  const shares = distributeLargestRemainder(discount.amountMinor, grosses);
  const lines = breakdown.lines.map((line, index): PriceLine => {
    const { discount: _previous, ...rest } = line;
    return {
      ...rest,
      amount: money(grosses[index] - shares[index], currency),
      discount: money(shares[index], currency),
    };
  });
  const applied: AppliedDiscount = { code: code.code, kind: code.kind, value: code.value, amount: discount };
  return {
    lines,
    total: sumMoney(
      lines.map((line) => line.amount),
      currency,
    ),
    discount: applied,
  };
}
