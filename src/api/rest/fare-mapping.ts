// Contract JSON of the fares operations: discount codes, passenger types and a party's prices, both ways.
import type { DiscountCodeView } from '../../application/fares';
import type { PartyFareView } from '../../application/interface';
import type { DiscountCodeInputData } from '../../domain/discount-codes';
import type { PassengerType } from '../../domain/passenger-types';

type Json = Record<string, unknown>;

/** `AMOUNT`/`PERCENT` as the domain names them; anything else is passed on for the domain to refuse. */
function domainKind(value: unknown): unknown {
  return value === 'AMOUNT' || value === 'PERCENT' ? value.toLowerCase() : value;
}

export function discountCodeInput(body: unknown): DiscountCodeInputData {
  const json = (body ?? {}) as Json;
  return {
    code: json.code,
    kind: domainKind(json.kind),
    value: json.value,
    currency: json.currency,
    validFrom: json.valid_from,
    validUntil: json.valid_until,
    routeIds: json.route_ids,
    maxUsages: json.max_usages,
  };
}

export function discountCodeJson(code: DiscountCodeView) {
  return {
    code: code.code,
    kind: code.kind.toUpperCase(),
    value: code.value,
    currency: code.currency ?? null,
    valid_from: code.validFrom,
    valid_until: code.validUntil,
    route_ids: [...code.routeIds],
    max_usages: code.maxUsages,
    usages: code.usages,
    remaining: code.remaining,
    created_at: code.createdAt,
  };
}

export function passengerTypeJson(type: PassengerType) {
  const rule = type.priceRule;
  return {
    code: type.code,
    name: type.name,
    min_age: type.minAge,
    max_age: type.maxAge,
    price_rule: {
      share_percent: rule.kind === 'share' ? rule.percent : null,
      per_segment:
        rule.kind === 'per_segment'
          ? { amount_minor: rule.amount.amountMinor, currency: rule.amount.currency }
          : null,
    },
    takes_seat: type.takesSeat,
    birth_date_required: type.birthDateRequired,
    requires_companion: [...(type.requiresCompanion ?? [])],
  };
}

export function partyFareJson(fare: PartyFareView) {
  return {
    fare_class: fare.fareClass,
    seats_free: fare.seatsFree,
    total: { amount_minor: fare.total.amountMinor, currency: fare.total.currency },
    lines: fare.lines.map((line) => ({
      passenger_type: line.passengerType,
      count: line.count,
      unit_price: { amount_minor: line.unitPrice.amountMinor, currency: line.unitPrice.currency },
      amount: { amount_minor: line.amount.amountMinor, currency: line.amount.currency },
    })),
  };
}
