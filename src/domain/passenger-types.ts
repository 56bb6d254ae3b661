// Passenger types: each type's age range and share of the fare, who needs a seat, and who must travel with whom.
import type { FarePrices, FareClass, Money, PriceBreakdown, PriceLine } from './booking';
import { DomainError, validationFailed, type FieldViolation } from './errors';
import { priceBooking } from './fares';
import { money, sumMoney } from './money';
import { defaultMaxPassengers } from './validation';
import { parseCalendarDate, type CalendarDate } from './time';

/** A share of the fare class's price, or a fixed price for every leg of the booked segment. */
export type PassengerPriceRule =
  | { readonly kind: 'share'; readonly percent: number }
  | { readonly kind: 'per_segment'; readonly amount: Money };

export interface PassengerType {
  /** Upper case, e.g. `CHILD`; what requests and price lines name the type by. */
  readonly code: string;
  readonly name: string;
  /** Ages in whole years on the day of travel, both inclusive. */
  readonly minAge: number;
  readonly maxAge: number;
  readonly priceRule: PassengerPriceRule;
  /** An infant on a lap takes none: no seat number, no seat held. */
  readonly takesSeat: boolean;
  /**
   * A type priced for its age must be shown to fit it, so its passengers give a birth date; a passenger of a type
   * without this may give one, and it is then checked all the same.
   */
  readonly birthDateRequired: boolean;
  /** At least one passenger of one of these types travels in the same booking. */
  readonly requiresCompanion?: readonly string[];
}

/** What a passenger without a type is: priced at the full fare, as every passenger was before types. */
export const adultPassengerType = 'ADULT';

/**
 * The set a route without passenger types of its own sells. Infants travel free on an adult's lap; the age-priced
 * types (infant, child, youth) need a birth date, an adult does not.
 */
export const defaultPassengerTypes: readonly PassengerType[] = [
  {
    code: 'INFANT',
    name: 'Infant on a lap',
    minAge: 0,
    maxAge: 2,
    priceRule: { kind: 'share', percent: 0 },
    takesSeat: false,
    birthDateRequired: true,
    requiresCompanion: [adultPassengerType],
  },
  {
    code: 'CHILD',
    name: 'Child',
    minAge: 3,
    maxAge: 12,
    priceRule: { kind: 'share', percent: 50 },
    takesSeat: true,
    birthDateRequired: true,
  },
  {
    code: 'YOUTH',
    name: 'Youth',
    minAge: 13,
    maxAge: 25,
    priceRule: { kind: 'share', percent: 80 },
    takesSeat: true,
    birthDateRequired: true,
  },
  {
    code: adultPassengerType,
    name: 'Adult',
    minAge: 26,
    maxAge: 99,
    priceRule: { kind: 'share', percent: 100 },
    takesSeat: true,
    birthDateRequired: false,
  },
];

const typeCodePattern = /^[A-Z][A-Z0-9_]{1,19}$/;

/** A configured set that breaks these rules is a data bug (INTERNAL), never the caller's fault. */
export function assertPassengerTypeSet(types: readonly PassengerType[]): void {
  const codes = new Set(types.map((type) => type.code));
  const problems = [
    ...(types.length === 0 ? ['a route sells at least one passenger type'] : []),
    ...(codes.size !== types.length ? ['passenger type codes are unique'] : []),
    ...types.flatMap((type) => {
      const rule = type.priceRule;
      return [
        ...(typeCodePattern.test(type.code) ? [] : [`${type.code} is not a passenger type code`]),
        ...(Number.isInteger(type.minAge) && Number.isInteger(type.maxAge) && type.minAge >= 0
          ? []
          : [`${type.code}'s ages are whole years from 0`]),
        ...(type.maxAge >= type.minAge ? [] : [`${type.code}'s age range is empty`]),
        ...(rule.kind === 'share' &&
        !(Number.isInteger(rule.percent) && rule.percent >= 0 && rule.percent <= 100)
          ? [`${type.code}'s share is a whole percent from 0 to 100`]
          : []),
        ...(rule.kind === 'per_segment' && rule.amount.amountMinor < 0
          ? [`${type.code}'s price per segment is not negative`]
          : []),
        ...(type.requiresCompanion ?? [])
          .filter((companion) => !codes.has(companion))
          .map((companion) => `${type.code} requires ${companion}, which the set does not have`),
      ];
    }),
  ];
  if (problems.length > 0) {
    throw new DomainError('INTERNAL', `Invalid passenger type set: ${problems.join('; ')}`);
  }
}

// ---- Calendar dates and ages ----

function calendarDateOf(text: string, what: string): CalendarDate {
  const date = parseCalendarDate(text);
  if (date === undefined) throw new DomainError('INTERNAL', `${what} is not a calendar date`);
  return date;
}

/**
 * Age in whole years on `travelDate` (both `YYYY-MM-DD`). A birthday counts from its own month and day, so someone
 * born on 29 February turns a year older on 1 March in a year without that day. Negative when the birth date comes
 * after the travel date; unreadable dates are INTERNAL (validate input with parseCalendarDate first).
 */
export function ageOn(birthDate: string, travelDate: string): number {
  const born = calendarDateOf(birthDate, 'The birth date');
  const travel = calendarDateOf(travelDate, 'The travel date');
  const birthdayPassed = travel.month > born.month || (travel.month === born.month && travel.day >= born.day);
  return travel.year - born.year - (birthdayPassed ? 0 : 1);
}

// ---- Checking a booking's passengers ----

/** A passenger as the type rules see it; an absent type is an adult, an empty or absent seat number is none. */
export interface TypedPassenger {
  readonly passengerType?: string;
  readonly birthDate?: string;
  readonly seatNumber?: string;
}

function typeCodeOf(passenger: Pick<TypedPassenger, 'passengerType'>): string {
  return passenger.passengerType ?? adultPassengerType;
}

function typesByCode(types: readonly PassengerType[]): ReadonlyMap<string, PassengerType> {
  return new Map(types.map((type) => [type.code, type]));
}

function ageRange(type: PassengerType): string {
  return `${type.minAge}–${type.maxAge}`;
}

function unknownTypeMessage(code: string, types: readonly PassengerType[]): string {
  return `unknown passenger type ${code}; this route sells ${types.map((type) => type.code).join(', ')}`;
}

/**
 * The rules over the party as a whole, given each passenger's type code (unknown codes are skipped): a type that
 * requires a companion has one, and every lap passenger has a lap of their own, each lap passenger taking the lap
 * of one passenger of the types they require (any seated passenger when the type names none).
 */
export function companionRuleViolations(
  codes: readonly string[],
  types: readonly PassengerType[],
  fieldOf: (index: number) => string,
): FieldViolation[] {
  const byCode = typesByCode(types);
  const present = new Set(codes);
  const violations: FieldViolation[] = [];
  codes.forEach((code, index) => {
    const companions = byCode.get(code)?.requiresCompanion ?? [];
    if (companions.length > 0 && !companions.some((companion) => present.has(companion))) {
      violations.push({
        field: fieldOf(index),
        message: `a passenger of type ${code} travels with a passenger of type ${companions.join(' or ')} in the same booking`,
      });
    }
  });
  const lapIndexes = codes.flatMap((code, index) => (byCode.get(code)?.takesSeat === false ? [index] : []));
  if (lapIndexes.length === 0) return violations;
  const lapTypes = new Set(lapIndexes.map((index) => byCode.get(codes[index])!));
  const anySeated = [...lapTypes].some((type) => (type.requiresCompanion ?? []).length === 0);
  const lapHolderTypes = new Set([...lapTypes].flatMap((type) => type.requiresCompanion ?? []));
  const laps = codes.filter((code) => {
    const type = byCode.get(code);
    return type !== undefined && type.takesSeat && (anySeated || lapHolderTypes.has(code));
  }).length;
  const holders = anySeated ? 'seated passengers' : [...lapHolderTypes].join(' or ');
  if (laps > 0 && lapIndexes.length > laps) {
    for (const index of lapIndexes.slice(laps)) {
      violations.push({
        field: fieldOf(index),
        message: `each lap passenger needs a lap of their own: ${lapIndexes.length} lap passengers, ${laps} ${holders}`,
      });
    }
  }
  return violations;
}

export interface PassengerTypeCheckOptions {
  /** The request path of passenger `index`; by default `passengers[index]`. */
  readonly pathOf?: (index: number) => string;
}

/**
 * Every violation of the passengers against the route's types on `travelDate` (`YYYY-MM-DD`, the day of travel at
 * the boarding stop): unknown types, missing or unreadable birth dates, ages outside the type's range, seat numbers
 * where none is taken or missing where one is, and the companion and lap rules.
 */
export function passengerTypeViolations(
  passengers: readonly TypedPassenger[],
  types: readonly PassengerType[],
  travelDate: string,
  options: PassengerTypeCheckOptions = {},
): FieldViolation[] {
  const pathOf = options.pathOf ?? ((index: number) => `passengers[${index}]`);
  const byCode = typesByCode(types);
  calendarDateOf(travelDate, 'The travel date');
  const violations: FieldViolation[] = [];
  passengers.forEach((passenger, index) => {
    const path = pathOf(index);
    const code = typeCodeOf(passenger);
    const type = byCode.get(code);
    if (type === undefined) {
      // A passenger without a type is an adult on a route whose set has none: priced as before types, unchecked.
      if (passenger.passengerType !== undefined) {
        violations.push({ field: `${path}.passenger_type`, message: unknownTypeMessage(code, types) });
      }
      return;
    }
    const hasSeat = passenger.seatNumber !== undefined && passenger.seatNumber !== '';
    if (!type.takesSeat && hasSeat) {
      violations.push({
        field: `${path}.seat_number`,
        message: `must be absent: a passenger of type ${code} travels on a lap and takes no seat`,
      });
    } else if (type.takesSeat && !hasSeat) {
      violations.push({
        field: `${path}.seat_number`,
        message: `is required: a passenger of type ${code} takes a seat`,
      });
    }
    if (passenger.birthDate === undefined) {
      if (type.birthDateRequired) {
        violations.push({
          field: `${path}.birth_date`,
          message: `is required for passenger type ${code} (ages ${ageRange(type)})`,
        });
      }
      return;
    }
    const born = parseCalendarDate(passenger.birthDate);
    if (born === undefined) {
      violations.push({ field: `${path}.birth_date`, message: 'must be a calendar date such as 2019-04-23' });
      return;
    }
    const age = ageOn(passenger.birthDate, travelDate);
    if (age < 0) {
      violations.push({ field: `${path}.birth_date`, message: `is after the day of travel ${travelDate}` });
    } else if (age < type.minAge || age > type.maxAge) {
      violations.push({
        field: `${path}.birth_date`,
        message: `age ${age} on ${travelDate} is outside ${code}'s ${ageRange(type)}`,
      });
    }
  });
  violations.push(
    ...companionRuleViolations(
      passengers.map(typeCodeOf),
      types,
      (index) => `${pathOf(index)}.passenger_type`,
    ),
  );
  return violations;
}

/** passengerTypeViolations as one VALIDATION_FAILED listing them all; nothing when the passengers fit. */
export function assertPassengerTypes(
  passengers: readonly TypedPassenger[],
  types: readonly PassengerType[],
  travelDate: string,
  options: PassengerTypeCheckOptions = {},
): void {
  const violations = passengerTypeViolations(passengers, types, travelDate, options);
  if (violations.length > 0) throw validationFailed(violations);
}

// ---- Parties: how many of each type a search prices ----

export interface PartyEntry {
  readonly passengerType: string;
  readonly count: number;
}

const partyItemPattern = /^([A-Za-z][A-Za-z0-9_]*):(\d+)$/;

/**
 * A party as a search names it, `ADULT:2,CHILD:1` (codes in any case, spaces around items ignored), checked against
 * the route's types: known types, each once, counts of 1 or more, at most `maxPassengers` in all, and the companion
 * and lap rules. Every problem is one VALIDATION_FAILED on `field`.
 */
export function parseParty(
  text: unknown,
  types: readonly PassengerType[],
  options: { readonly maxPassengers?: number; readonly field?: string } = {},
): PartyEntry[] {
  const maxPassengers = options.maxPassengers ?? defaultMaxPassengers;
  const field = options.field ?? 'passengers';
  const fail = (messages: readonly string[]) =>
    validationFailed(messages.map((message) => ({ field, message })));
  if (typeof text !== 'string' || text.trim() === '') {
    throw fail(['must name at least one passenger type and count, such as ADULT:2,CHILD:1']);
  }
  const byCode = typesByCode(types);
  const messages: string[] = [];
  const party: PartyEntry[] = [];
  for (const item of text.split(',').map((part) => part.trim())) {
    const match = partyItemPattern.exec(item);
    if (match === null) {
      messages.push(`"${item}" is not a type and a count such as ADULT:2`);
      continue;
    }
    const code = match[1].toUpperCase();
    const count = Number(match[2]);
    if (!byCode.has(code)) {
      messages.push(unknownTypeMessage(code, types));
    } else if (party.some((entry) => entry.passengerType === code)) {
      messages.push(`${code} is given more than once`);
    } else if (count < 1 || count > maxPassengers) {
      messages.push(`the count of ${code} must be a whole number from 1 to ${maxPassengers}`);
    } else {
      party.push({ passengerType: code, count });
    }
  }
  const total = party.reduce((sum, entry) => sum + entry.count, 0);
  if (total > maxPassengers) {
    messages.push(`a party has at most ${maxPassengers} passengers; this one has ${total}`);
  }
  if (messages.length === 0) {
    const codes = party.flatMap((entry) => Array.from({ length: entry.count }, () => entry.passengerType));
    const partyRules = companionRuleViolations(codes, types, () => field).map(
      (violation) => violation.message,
    );
    messages.push(...new Set(partyRules));
  }
  if (messages.length > 0) throw fail(messages);
  return party;
}

/** How many seats a party needs: lap passengers take none. */
export function seatsNeeded(party: readonly PartyEntry[], types: readonly PassengerType[]): number {
  const byCode = typesByCode(types);
  return party.reduce(
    (sum, entry) => sum + (byCode.get(entry.passengerType)?.takesSeat === false ? 0 : entry.count),
    0,
  );
}

// ---- Prices ----

export interface PassengerPricing {
  readonly types: readonly PassengerType[];
  /** Legs of the booked segment, for per-segment prices. */
  readonly legCount: number;
}

/**
 * The fare of one passenger of `type` when the fare class costs `classPrice` (the segment's price). A share rounds
 * half up to the minor unit (50 % of 1 255 is 628): a fare is a price, not a refund, so the nearest unit is fair.
 */
export function typeFare(classPrice: Money, type: PassengerType | undefined, legCount: number): Money {
  const rule = type?.priceRule ?? { kind: 'share', percent: 100 };
  if (rule.kind === 'share') {
    return money(Math.floor((classPrice.amountMinor * rule.percent + 50) / 100), classPrice.currency);
  }
  if (rule.amount.currency !== classPrice.currency) {
    throw new DomainError(
      'INTERNAL',
      `Passenger type ${type?.code} is priced in ${rule.amount.currency}, the trip in ${classPrice.currency}`,
    );
  }
  if (!Number.isInteger(legCount) || legCount < 1) {
    throw new DomainError('INTERNAL', 'A segment has at least one leg');
  }
  return money(rule.amount.amountMinor * legCount, classPrice.currency);
}

export interface PassengerToPrice {
  readonly id: string;
  readonly seatNumber?: string;
  readonly fareClass: FareClass;
  readonly passengerType?: string;
}

function typeOrRefuse(code: string, pricing: PassengerPricing, field: string): PassengerType {
  const type = typesByCode(pricing.types).get(code);
  if (type === undefined) {
    throw validationFailed([{ field, message: unknownTypeMessage(code, pricing.types) }]);
  }
  return type;
}

/**
 * One line per passenger: the fare class's price for the segment (`farePrices`, from segmentFarePrices) under
 * the passenger's type. A passenger without a type gets exactly the line priceBooking gives, so bookings made
 * before types price as they did; a typed line names its type.
 */
export function priceParty(
  passengers: readonly PassengerToPrice[],
  farePrices: FarePrices,
  pricing: PassengerPricing,
  fareClassField?: (index: number) => string,
): PriceBreakdown {
  const base = priceBooking(
    passengers.map((passenger) => ({ ...passenger, seatNumber: passenger.seatNumber ?? '' })),
    farePrices,
    fareClassField,
  );
  const lines = base.lines.map((line, index): PriceLine => {
    const code = passengers[index].passengerType;
    if (code === undefined) return line;
    const type = typeOrRefuse(code, pricing, `passengers[${index}].passenger_type`);
    return { ...line, amount: typeFare(line.amount, type, pricing.legCount), passengerType: code };
  });
  return {
    lines,
    total: sumMoney(
      lines.map((line) => line.amount),
      base.total.currency,
    ),
  };
}

/** The line of one passenger, as priceParty prices it. */
export function pricePassenger(
  passenger: PassengerToPrice,
  farePrices: FarePrices,
  pricing: PassengerPricing,
): PriceLine {
  return priceParty([passenger], farePrices, pricing).lines[0];
}

export interface PartyFareLine {
  readonly passengerType: string;
  readonly count: number;
  readonly unitPrice: Money;
  readonly amount: Money;
}

/** What a party pays in one fare class costing `classPrice` for the segment: per type and in total (search). */
export function partyFare(
  party: readonly PartyEntry[],
  classPrice: Money,
  pricing: PassengerPricing,
): { readonly lines: readonly PartyFareLine[]; readonly total: Money } {
  const lines = party.map((entry): PartyFareLine => {
    const unitPrice = typeFare(
      classPrice,
      typeOrRefuse(entry.passengerType, pricing, 'passengers'),
      pricing.legCount,
    );
    return {
      passengerType: entry.passengerType,
      count: entry.count,
      unitPrice,
      amount: money(unitPrice.amountMinor * entry.count, unitPrice.currency),
    };
  });
  return {
    lines,
    total: sumMoney(
      lines.map((line) => line.amount),
      classPrice.currency,
    ),
  };
}

/**
 * The day of travel (`YYYY-MM-DD`) ages are checked on: the date at the boarding stop when the bus leaves it, from
 * the segment's local time; the departure's UTC date for a booking made before segments.
 */
export function travelDateOf(booking: {
  readonly departureTime: string;
  readonly segment?: { readonly boardingStop: { readonly localTime: string } };
}): string {
  return (booking.segment?.boardingStop.localTime ?? booking.departureTime).slice(0, 10);
}
