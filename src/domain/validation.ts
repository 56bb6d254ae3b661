// Turns untrusted create/update/cancel/payment inputs into typed commands, or one VALIDATION_FAILED listing every problem.
import {
  bookingStatuses,
  fareClasses,
  type BookingStatus,
  type FareClass,
  type Money,
  type Passenger,
  type PassengerInput,
} from './booking';
import { DomainError, validationFailed, type FieldViolation } from './errors';
import { minuteMs, parseCalendarDate } from './time';

export const defaultMaxPassengers = 9;
export const defaultHoldDurationMs = 15 * minuteMs;
export const maxNameLength = 100;
export const maxEmailLength = 254;
export const maxCancellationReasonLength = 500;
export const maxPaymentTokenLength = 128;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const seatNumberPattern = /^[1-9][0-9]?[A-F]$/;
const e164Pattern = /^\+[1-9][0-9]{1,14}$/;
/** The HTML standard's "valid e-mail address", except that the domain must contain a dot to be deliverable. */
const emailPattern =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const controlCharacterPattern = /\p{Cc}/u;
const controlCharacterExceptLineBreaksPattern = /[^\P{Cc}\n\r\t]/u;
/** A gateway token (`tok_visa`), never a card number: the REST contract's pattern, so both fronts agree. */
const paymentTokenPattern = /^tok_[A-Za-z0-9_]{1,124}$/;
/** A payment method id from the processor's client-side SDK (`pm_…`), the REST contract's pattern too. */
const paymentMethodPattern = /^pm_[A-Za-z0-9_]{1,124}$/;
const idempotencyKeyPattern = /^[A-Za-z0-9._:-]{1,255}$/;
const nulCharacter = '\u0000';
const maximumNulViolations = 50;

/**
 * What each rule says to the caller when a field breaks it, one sentence that never quotes a pattern. Both fronts
 * use these: gRPC through the readers below, REST for the same rules written as schemas in the OpenAPI document.
 */
export const fieldMessages = {
  notAString: 'is required and must be a string',
  nameLength: `must be 1 to ${maxNameLength} characters after trimming spaces`,
  controlCharacters: 'must not contain control characters',
  email: 'must be a valid email address',
  phone: 'must be an E.164 phone number such as +351912345678',
  seatNumber: 'must be a seat number such as 12C (row 1-99, seat A-F)',
  stopCode: 'must be a stop code of 2 to 12 capital letters or digits, such as HAJ',
  uuid: 'must be a UUID',
  nulCharacter: 'must not contain the NUL character (U+0000)',
  nulPropertyName: 'property names must not contain the NUL character (U+0000)',
  paymentToken: 'is required: a gateway token such as tok_visa (tok_ then 1 to 124 letters, digits or _)',
  paymentMethod: 'must be a payment method id such as pm_card_visa (pm_ then 1 to 124 letters, digits or _)',
  paymentTokenOrMethod: 'give payment_token or payment_method, not both',
  idempotencyKey: 'must be 1 to 255 characters, each a letter, a digit or one of . _ : -',
  passengerCount: (maxPassengers: number) => `must list 1 to ${maxPassengers} passengers`,
  passengerUpdateChangesNothing: 'must change at least one of first_name, last_name, email, phone',
  emptyUpdate: 'an update must give at least one of seat_changes, add_passengers or passenger_updates',
} as const;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && uuidPattern.test(value);
}

export function isSeatNumber(value: unknown): value is string {
  return typeof value === 'string' && seatNumberPattern.test(value);
}

export function isE164Phone(value: unknown): value is string {
  return typeof value === 'string' && e164Pattern.test(value);
}

export function isEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= maxEmailLength && emailPattern.test(value);
}

/** The REST contract's Idempotency-Key, also gRPC's `request_id`: 1 to 255 of `A-Z a-z 0-9 . _ : -`. */
export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && idempotencyKeyPattern.test(value);
}

/**
 * Every string of a request, and every property name, that holds U+0000: PostgreSQL text cannot store it, so
 * it is bad input wherever it appears. Fields are named in contract notation (`passengers[0].first_name`),
 * `nameOf` turning a property key into its contract name. Walks iteratively: a body may nest thousands deep.
 */
export function nulCharacterViolations(
  value: unknown,
  field = '',
  nameOf: (key: string) => string = (key) => key,
): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const pending: { value: unknown; field: string }[] = [{ value, field }];
  while (pending.length > 0 && violations.length < maximumNulViolations) {
    const next = pending.pop()!;
    if (typeof next.value === 'string') {
      if (next.value.includes(nulCharacter)) {
        violations.push({ field: next.field, message: fieldMessages.nulCharacter });
      }
    } else if (Array.isArray(next.value)) {
      next.value.forEach((item, index) => pending.push({ value: item, field: `${next.field}[${index}]` }));
    } else if (isPlainObject(next.value)) {
      for (const [key, item] of Object.entries(next.value)) {
        if (key.includes(nulCharacter)) {
          violations.push({
            field: next.field,
            message: fieldMessages.nulPropertyName,
          });
          continue;
        }
        const name = nameOf(key);
        pending.push({ value: item, field: next.field ? `${next.field}.${name}` : name });
      }
    }
  }
  // The walk visits fields last-first; report them in the order they were given.
  return violations.reverse();
}

export function isFareClass(value: unknown): value is FareClass {
  return typeof value === 'string' && (fareClasses as readonly string[]).includes(value);
}

/** Collects violations so one answer lists every bad field. */
class ViolationList {
  readonly violations: FieldViolation[] = [];

  add(field: string, message: string): void {
    this.violations.push({ field, message });
  }

  throwIfAny(): void {
    if (this.violations.length > 0) throw validationFailed(this.violations);
  }
}

/**
 * Optional fields arrive as undefined (JSON), null (JSON) or '' (proto3 strings without presence); all three
 * mean "not given".
 */
function isAbsent(value: unknown): value is undefined | null | '' {
  return value === undefined || value === null || value === '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Array.isArray, with items left unknown (its own guard says `any[]`). */
function isList(value: unknown): value is unknown[] {
  return Array.isArray(value);
}

/** Parsed JSON and generated messages; not Dates, Buffers or other class instances. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function readName(value: unknown, field: string, violations: ViolationList): string | undefined {
  if (typeof value !== 'string') {
    violations.add(field, fieldMessages.notAString);
    return undefined;
  }
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > maxNameLength) {
    violations.add(field, fieldMessages.nameLength);
    return undefined;
  }
  if (controlCharacterPattern.test(trimmed)) {
    violations.add(field, fieldMessages.controlCharacters);
    return undefined;
  }
  return trimmed;
}

function readEmail(value: unknown, field: string, violations: ViolationList): string | undefined {
  if (typeof value !== 'string') {
    violations.add(field, fieldMessages.notAString);
    return undefined;
  }
  const trimmed = value.trim();
  if (!isEmail(trimmed)) {
    violations.add(field, fieldMessages.email);
    return undefined;
  }
  return trimmed;
}

/** Returns null for "not given" so callers can tell it from "given but invalid" (undefined). */
function readOptionalPhone(
  value: unknown,
  field: string,
  violations: ViolationList,
): string | null | undefined {
  if (isAbsent(value)) return null;
  if (typeof value !== 'string' || !isE164Phone(value.trim())) {
    violations.add(field, fieldMessages.phone);
    return undefined;
  }
  return value.trim();
}

function readSeatNumber(value: unknown, field: string, violations: ViolationList): string | undefined {
  if (!isSeatNumber(value)) {
    violations.add(field, fieldMessages.seatNumber);
    return undefined;
  }
  return value;
}

function readFareClass(value: unknown, field: string, violations: ViolationList): FareClass | undefined {
  if (!isFareClass(value)) {
    violations.add(field, `must be one of ${fareClasses.join(', ')}`);
    return undefined;
  }
  return value;
}

function readUuid(value: unknown, field: string, violations: ViolationList): string | undefined {
  if (!isUuid(value)) {
    violations.add(field, fieldMessages.uuid);
    return undefined;
  }
  return value.toLowerCase();
}

function readList(value: unknown, field: string, violations: ViolationList): unknown[] | undefined {
  if (isAbsent(value)) return [];
  if (!isList(value)) {
    violations.add(field, 'must be a list');
    return undefined;
  }
  return value;
}

/** Wire shape of a passenger, camelCase; both fronts map their payload onto it. */
export interface PassengerInputData {
  readonly firstName?: unknown;
  readonly lastName?: unknown;
  readonly email?: unknown;
  readonly phone?: unknown;
  readonly seatNumber?: unknown;
  readonly fareClass?: unknown;
  readonly passengerType?: unknown;
  readonly birthDate?: unknown;
}

const passengerTypeCodePattern = /^[A-Z][A-Z0-9_]{0,15}$/;

function readOptionalPassengerType(
  value: unknown,
  field: string,
  violations: ViolationList,
): string | null | undefined {
  if (isAbsent(value)) return null;
  if (typeof value !== 'string' || !passengerTypeCodePattern.test(value)) {
    violations.add(field, 'must be a passenger type code such as ADULT or CHILD');
    return undefined;
  }
  return value;
}

function readOptionalBirthDate(
  value: unknown,
  field: string,
  violations: ViolationList,
): string | null | undefined {
  if (isAbsent(value)) return null;
  if (parseCalendarDate(value) === undefined) {
    violations.add(field, 'must be a date YYYY-MM-DD that exists');
    return undefined;
  }
  return value as string;
}

function readPassenger(value: unknown, path: string, violations: ViolationList): PassengerInput | undefined {
  if (!isRecord(value)) {
    violations.add(path, 'must be an object');
    return undefined;
  }
  const input = value as PassengerInputData;
  const firstName = readName(input.firstName, `${path}.first_name`, violations);
  const lastName = readName(input.lastName, `${path}.last_name`, violations);
  const email = readEmail(input.email, `${path}.email`, violations);
  const phone = readOptionalPhone(input.phone, `${path}.phone`, violations);
  const passengerType = readOptionalPassengerType(input.passengerType, `${path}.passenger_type`, violations);
  const birthDate = readOptionalBirthDate(input.birthDate, `${path}.birth_date`, violations);
  // A typed passenger may take no seat (an infant on a lap); whether the type allows that is the route's to say.
  const seatNumber =
    isAbsent(input.seatNumber) && typeof passengerType === 'string'
      ? ''
      : readSeatNumber(input.seatNumber, `${path}.seat_number`, violations);
  const fareClass = readFareClass(input.fareClass, `${path}.fare_class`, violations);
  if (
    firstName === undefined ||
    lastName === undefined ||
    email === undefined ||
    phone === undefined ||
    passengerType === undefined ||
    birthDate === undefined ||
    seatNumber === undefined ||
    fareClass === undefined
  ) {
    return undefined;
  }
  return {
    firstName,
    lastName,
    email,
    ...(phone === null ? {} : { phone }),
    seatNumber,
    fareClass,
    ...(passengerType === null ? {} : { passengerType }),
    ...(birthDate === null ? {} : { birthDate }),
  };
}

/** Money a client names (the total it showed): whole minor units, not negative, and an ISO 4217 code. */
function readOptionalMoney(
  value: unknown,
  field: string,
  violations: ViolationList,
): Money | null | undefined {
  if (isAbsent(value)) return null;
  const amountMinor = isRecord(value) ? value.amountMinor : undefined;
  const currency = isRecord(value) ? value.currency : undefined;
  if (
    typeof amountMinor !== 'number' ||
    !Number.isSafeInteger(amountMinor) ||
    amountMinor < 0 ||
    typeof currency !== 'string' ||
    !/^[A-Z]{3}$/.test(currency)
  ) {
    violations.add(
      field,
      'must be an amount in whole minor units (not negative) with a 3-letter currency code',
    );
    return undefined;
  }
  return { amountMinor, currency };
}

/** A discount code as typed: spaces around it dropped, case folded; whether it exists is looked up later. */
function readOptionalDiscountCode(
  value: unknown,
  field: string,
  violations: ViolationList,
): string | null | undefined {
  if (isAbsent(value)) return null;
  const code = typeof value === 'string' ? value.trim().toUpperCase() : undefined;
  if (code === undefined || !/^[A-Z0-9-]{1,32}$/.test(code)) {
    violations.add(field, 'must be a discount code: letters, digits and dashes, at most 32');
    return undefined;
  }
  return code;
}

/** The well-formed seat numbers among raw passenger inputs, each with its field path. */
function rawSeatClaims(values: readonly unknown[], listField: string): SeatClaim[] {
  return values.flatMap((value, index) => {
    const seatNumber = isRecord(value) ? value.seatNumber : undefined;
    return isSeatNumber(seatNumber) ? [{ seatNumber, path: `${listField}[${index}].seat_number` }] : [];
  });
}

interface SeatClaim {
  readonly seatNumber: string;
  /** Where the claim came from in the request; undefined for a seat the booking already holds. */
  readonly path: string | undefined;
}

/** Reports every seat claimed by more than one passenger, on each claimant that has a path. */
function reportDuplicateSeats(claims: readonly SeatClaim[], violations: ViolationList): void {
  const claimsBySeat = new Map<string, number>();
  // A passenger without a seat (an infant on a lap) claims none.
  for (const claim of claims.filter((seated) => seated.seatNumber !== ''))
    claimsBySeat.set(claim.seatNumber, (claimsBySeat.get(claim.seatNumber) ?? 0) + 1);
  for (const claim of claims) {
    if (claim.path !== undefined && (claimsBySeat.get(claim.seatNumber) ?? 0) > 1) {
      violations.add(
        claim.path,
        `seat ${claim.seatNumber} is given to more than one passenger of this booking`,
      );
    }
  }
}

export interface ValidationOptions {
  readonly maxPassengers?: number;
}

export interface CreateBookingInput {
  readonly tripId?: unknown;
  readonly passengers?: unknown;
  readonly contactEmail?: unknown;
  readonly contactPhone?: unknown;
  readonly boardingStop?: unknown;
  readonly alightingStop?: unknown;
  readonly discountCode?: unknown;
  /** The total the client showed; the create goes ahead only at that price. */
  readonly expectedTotal?: unknown;
}

export interface CreateBookingCommand {
  readonly tripId: string;
  readonly passengers: readonly PassengerInput[];
  readonly contactEmail: string;
  readonly contactPhone?: string;
  /** Stop codes of the segment; an absent one is the route's end on that side (checked against the route later). */
  readonly boardingStopCode?: string;
  readonly alightingStopCode?: string;
  /** Upper case, as codes are stored. */
  readonly discountCode?: string;
  readonly expectedTotal?: Money;
}

/** A stop code as the catalogue spells it (`stops.code`); null when not given. */
function readOptionalStopCode(
  value: unknown,
  field: string,
  violations: ViolationList,
): string | null | undefined {
  if (isAbsent(value)) return null;
  if (typeof value !== 'string' || !/^[A-Z0-9]{2,12}$/.test(value)) {
    violations.add(field, fieldMessages.stopCode);
    return undefined;
  }
  return value;
}

export function validateCreateBooking(
  input: CreateBookingInput,
  options: ValidationOptions = {},
): CreateBookingCommand {
  const maxPassengers = options.maxPassengers ?? defaultMaxPassengers;
  const violations = new ViolationList();
  const tripId = readUuid(input.tripId, 'trip_id', violations);
  const contactEmail = readEmail(input.contactEmail, 'contact_email', violations);
  const contactPhone = readOptionalPhone(input.contactPhone, 'contact_phone', violations);
  const boardingStopCode = readOptionalStopCode(input.boardingStop, 'boarding_stop', violations);
  const alightingStopCode = readOptionalStopCode(input.alightingStop, 'alighting_stop', violations);
  const discountCode = readOptionalDiscountCode(input.discountCode, 'discount_code', violations);
  const expectedTotal = readOptionalMoney(input.expectedTotal, 'expected_total', violations);

  const passengers: PassengerInput[] = [];
  if (!Array.isArray(input.passengers)) {
    violations.add('passengers', 'is required and must be a list');
  } else {
    if (input.passengers.length < 1 || input.passengers.length > maxPassengers) {
      violations.add('passengers', fieldMessages.passengerCount(maxPassengers));
    }
    input.passengers.forEach((value, index) => {
      const passenger = readPassenger(value, `passengers[${index}]`, violations);
      if (passenger !== undefined) passengers.push(passenger);
    });
    reportDuplicateSeats(rawSeatClaims(input.passengers, 'passengers'), violations);
  }

  violations.throwIfAny();
  return {
    tripId: tripId as string,
    passengers,
    contactEmail: contactEmail as string,
    ...(typeof contactPhone === 'string' ? { contactPhone } : {}),
    ...(typeof boardingStopCode === 'string' ? { boardingStopCode } : {}),
    ...(typeof alightingStopCode === 'string' ? { alightingStopCode } : {}),
    ...(typeof discountCode === 'string' ? { discountCode } : {}),
    ...(expectedTotal !== null && expectedTotal !== undefined ? { expectedTotal } : {}),
  };
}

export interface SeatChange {
  readonly passengerId: string;
  readonly seatNumber: string;
  readonly fareClass: FareClass;
}

export interface PassengerDetailsUpdate {
  readonly passengerId: string;
  readonly firstName?: string;
  readonly lastName?: string;
  readonly email?: string;
  readonly phone?: string;
}

export interface UpdateBookingInput {
  readonly seatChanges?: unknown;
  readonly addPassengers?: unknown;
  readonly passengerUpdates?: unknown;
  readonly boardingStop?: unknown;
  readonly alightingStop?: unknown;
  /** The total the client showed for the booking after the change; the change goes ahead only at that price. */
  readonly expectedTotal?: unknown;
}

export interface UpdateBookingCommand {
  readonly seatChanges: readonly SeatChange[];
  readonly addPassengers: readonly PassengerInput[];
  readonly passengerUpdates: readonly PassengerDetailsUpdate[];
  /** A new boarding and/or alighting stop; the side not named keeps the booking's current stop. */
  readonly segmentChange?: { readonly boardingStopCode?: string; readonly alightingStopCode?: string };
  readonly expectedTotal?: Money;
}

/** Finds the passenger an entry refers to, reporting unknown and repeated ids. */
function readPassengerReference(
  value: unknown,
  field: string,
  passengersById: ReadonlyMap<string, Passenger>,
  alreadyReferenced: Set<string>,
  violations: ViolationList,
): Passenger | undefined {
  const passengerId = readUuid(value, field, violations);
  if (passengerId === undefined) return undefined;
  const passenger = passengersById.get(passengerId);
  if (passenger === undefined) {
    violations.add(field, 'no passenger with this id belongs to the booking');
    return undefined;
  }
  if (alreadyReferenced.has(passengerId)) {
    violations.add(field, 'this passenger appears more than once in the list');
    return undefined;
  }
  alreadyReferenced.add(passengerId);
  return passenger;
}

function readSeatChange(
  value: unknown,
  path: string,
  passengersById: ReadonlyMap<string, Passenger>,
  referenced: Set<string>,
  violations: ViolationList,
): SeatChange | undefined {
  if (!isRecord(value)) {
    violations.add(path, 'must be an object');
    return undefined;
  }
  const passenger = readPassengerReference(
    value.passengerId,
    `${path}.passenger_id`,
    passengersById,
    referenced,
    violations,
  );
  const seatNumber = readSeatNumber(value.seatNumber, `${path}.seat_number`, violations);
  const fareClass = isAbsent(value.fareClass)
    ? passenger?.fareClass
    : readFareClass(value.fareClass, `${path}.fare_class`, violations);
  if (passenger === undefined || seatNumber === undefined || fareClass === undefined) return undefined;
  if (seatNumber === passenger.seatNumber) {
    // A seat's fare class is fixed by the bus layout, so keeping the seat means keeping the class.
    violations.add(
      path,
      fareClass === passenger.fareClass
        ? 'the passenger already has this seat'
        : 'to change fare class choose a seat of that class',
    );
    return undefined;
  }
  return { passengerId: passenger.id, seatNumber, fareClass };
}

const editableDetails = [
  { key: 'firstName', field: 'first_name' },
  { key: 'lastName', field: 'last_name' },
  { key: 'email', field: 'email' },
  { key: 'phone', field: 'phone' },
] as const;

function readPassengerDetailsUpdate(
  value: unknown,
  path: string,
  passengersById: ReadonlyMap<string, Passenger>,
  referenced: Set<string>,
  violations: ViolationList,
): PassengerDetailsUpdate | undefined {
  if (!isRecord(value)) {
    violations.add(path, 'must be an object');
    return undefined;
  }
  const passenger = readPassengerReference(
    value.passengerId,
    `${path}.passenger_id`,
    passengersById,
    referenced,
    violations,
  );
  const changes: { firstName?: string; lastName?: string; email?: string; phone?: string } = {};
  let anyInvalid = false;
  for (const { key, field } of editableDetails) {
    if (isAbsent(value[key])) continue;
    const fieldPath = `${path}.${field}`;
    const read =
      key === 'email'
        ? readEmail(value[key], fieldPath, violations)
        : key === 'phone'
          ? readOptionalPhone(value[key], fieldPath, violations)
          : readName(value[key], fieldPath, violations);
    if (typeof read === 'string') changes[key] = read;
    else anyInvalid = true;
  }
  if (passenger === undefined || anyInvalid) return undefined;
  const changed = editableDetails.filter(
    ({ key }) => changes[key] !== undefined && changes[key] !== passenger[key],
  );
  if (changed.length === 0) {
    violations.add(path, fieldMessages.passengerUpdateChangesNothing);
    return undefined;
  }
  return { passengerId: passenger.id, ...changes };
}

/**
 * Checks an update against the booking's current passengers: every entry must change something, refer to
 * a passenger of the booking at most once per list, and leave every seat with at most one passenger.
 */
export function validateUpdateBooking(
  input: UpdateBookingInput,
  current: { readonly passengers: readonly Passenger[] },
  options: ValidationOptions = {},
): UpdateBookingCommand {
  const maxPassengers = options.maxPassengers ?? defaultMaxPassengers;
  const violations = new ViolationList();
  const passengersById = new Map(current.passengers.map((passenger) => [passenger.id, passenger]));

  const seatChangeValues = readList(input.seatChanges, 'seat_changes', violations);
  const addPassengerValues = readList(input.addPassengers, 'add_passengers', violations);
  const passengerUpdateValues = readList(input.passengerUpdates, 'passenger_updates', violations);

  const seatChanges: SeatChange[] = [];
  const seatChangeReferences = new Set<string>();
  const seatClaimPaths = new Map<string, string>();
  seatChangeValues?.forEach((value, index) => {
    const path = `seat_changes[${index}]`;
    const change = readSeatChange(value, path, passengersById, seatChangeReferences, violations);
    if (change === undefined) return;
    seatChanges.push(change);
    seatClaimPaths.set(change.passengerId, `${path}.seat_number`);
  });

  const addPassengers: PassengerInput[] = [];
  addPassengerValues?.forEach((value, index) => {
    const passenger = readPassenger(value, `add_passengers[${index}]`, violations);
    if (passenger !== undefined) addPassengers.push(passenger);
  });
  if (
    addPassengerValues !== undefined &&
    current.passengers.length + addPassengerValues.length > maxPassengers
  ) {
    violations.add('add_passengers', `a booking has at most ${maxPassengers} passengers`);
  }

  const passengerUpdates: PassengerDetailsUpdate[] = [];
  const updateReferences = new Set<string>();
  passengerUpdateValues?.forEach((value, index) => {
    const update = readPassengerDetailsUpdate(
      value,
      `passenger_updates[${index}]`,
      passengersById,
      updateReferences,
      violations,
    );
    if (update !== undefined) passengerUpdates.push(update);
  });

  const seatChangeByPassenger = new Map(seatChanges.map((change) => [change.passengerId, change]));
  reportDuplicateSeats(
    [
      ...current.passengers.map((passenger) => ({
        seatNumber: seatChangeByPassenger.get(passenger.id)?.seatNumber ?? passenger.seatNumber,
        path: seatClaimPaths.get(passenger.id),
      })),
      ...rawSeatClaims(addPassengerValues ?? [], 'add_passengers'),
    ],
    violations,
  );

  const boardingStopCode = readOptionalStopCode(input.boardingStop, 'boarding_stop', violations);
  const alightingStopCode = readOptionalStopCode(input.alightingStop, 'alighting_stop', violations);
  const expectedTotal = readOptionalMoney(input.expectedTotal, 'expected_total', violations);
  const segmentRequested = !isAbsent(input.boardingStop) || !isAbsent(input.alightingStop);
  // A segment change moves every seat of the booking to other legs: seats of the same change would need two plans.
  if (segmentRequested && (seatChangeValues?.length ?? 0) + (addPassengerValues?.length ?? 0) > 0) {
    violations.add(
      isAbsent(input.boardingStop) ? 'alighting_stop' : 'boarding_stop',
      'a segment change cannot come with seat changes or added passengers; send them as separate updates',
    );
  }

  const nothingRequested =
    (seatChangeValues?.length ?? 0) +
      (addPassengerValues?.length ?? 0) +
      (passengerUpdateValues?.length ?? 0) +
      (segmentRequested ? 1 : 0) ===
    0;
  if (nothingRequested && violations.violations.length === 0) {
    violations.add('', fieldMessages.emptyUpdate);
  }

  violations.throwIfAny();
  return {
    seatChanges,
    addPassengers,
    passengerUpdates,
    ...(segmentRequested
      ? {
          segmentChange: {
            ...(typeof boardingStopCode === 'string' ? { boardingStopCode } : {}),
            ...(typeof alightingStopCode === 'string' ? { alightingStopCode } : {}),
          },
        }
      : {}),
    ...(expectedTotal !== null && expectedTotal !== undefined ? { expectedTotal } : {}),
  };
}

export interface CancelBookingCommand {
  readonly reason?: string;
}

export function validateCancelBooking(input: { readonly reason?: unknown }): CancelBookingCommand {
  if (isAbsent(input.reason)) return {};
  const reason = typeof input.reason === 'string' ? input.reason.trim() : undefined;
  if (reason === undefined) throw validationFailed([{ field: 'reason', message: 'must be a string' }]);
  if ([...reason].length > maxCancellationReasonLength) {
    throw validationFailed([
      { field: 'reason', message: `must be at most ${maxCancellationReasonLength} characters` },
    ]);
  }
  if (controlCharacterExceptLineBreaksPattern.test(reason)) {
    throw validationFailed([{ field: 'reason', message: fieldMessages.controlCharacters }]);
  }
  return reason === '' ? {} : { reason };
}

export interface ConfirmPaymentCommand {
  /** A gateway token or a payment method id: the gateway tells them apart by their prefix. */
  readonly paymentToken: string;
}

function isWellFormedToken(value: unknown, pattern: RegExp): value is string {
  return (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= maxPaymentTokenLength &&
    pattern.test(value)
  );
}

/** Exactly one of a gateway token (`payment_token`) and a payment method id (`payment_method`). */
export function validateConfirmPayment(input: {
  readonly paymentToken?: unknown;
  readonly paymentMethod?: unknown;
}): ConfirmPaymentCommand {
  const { paymentToken: token, paymentMethod: method } = input;
  if (method !== undefined) {
    if (token !== undefined) {
      throw validationFailed([{ field: 'payment_method', message: fieldMessages.paymentTokenOrMethod }]);
    }
    if (!isWellFormedToken(method, paymentMethodPattern)) {
      throw validationFailed([{ field: 'payment_method', message: fieldMessages.paymentMethod }]);
    }
    return { paymentToken: method };
  }
  if (!isWellFormedToken(token, paymentTokenPattern)) {
    throw validationFailed([{ field: 'payment_token', message: fieldMessages.paymentToken }]);
  }
  return { paymentToken: token };
}

/** Ids in paths and bodies; a malformed one is a 400, never a lookup. */
export function validateId(value: unknown, field: string): string {
  const violations = new ViolationList();
  const id = readUuid(value, field, violations);
  violations.throwIfAny();
  return id as string;
}

/** The status a booking listing is filtered by; absent or empty means every status (null). */
export function validateBookingStatusFilter(status: unknown): BookingStatus | null {
  if (status === undefined || status === null || status === '') return null;
  if (typeof status !== 'string' || !(bookingStatuses as readonly string[]).includes(status)) {
    throw validationFailed([{ field: 'status', message: `must be one of ${bookingStatuses.join(', ')}` }]);
  }
  return status as BookingStatus;
}

export interface CancelPassengersCommand extends CancelBookingCommand {
  /** Lower case, in the order given. */
  readonly passengerIds: string[];
  readonly quoteId?: string;
}

/**
 * A partial cancellation as both fronts receive it: 1 to `maxPassengers` passenger ids (UUIDs, none twice), an
 * optional refund quote id, and a reason as a cancel's. Whether the passengers belong to the booking is the
 * workflow's to say.
 */
export function validateCancelPassengers(
  input: { readonly passengerIds?: unknown; readonly quoteId?: unknown; readonly reason?: unknown },
  options: { readonly maxPassengers?: number } = {},
): CancelPassengersCommand {
  const maxPassengers = options.maxPassengers ?? defaultMaxPassengers;
  const violations = new ViolationList();
  const passengerIds: string[] = [];
  if (!isList(input.passengerIds)) {
    violations.add('passenger_ids', 'is required and must be a list of passenger ids');
  } else if (input.passengerIds.length < 1 || input.passengerIds.length > maxPassengers) {
    violations.add('passenger_ids', `must name 1 to ${maxPassengers} passengers`);
  } else {
    input.passengerIds.forEach((value, index) => {
      const field = `passenger_ids[${index}]`;
      const id = readUuid(value, field, violations);
      if (id === undefined) return;
      if (passengerIds.includes(id))
        violations.add(field, 'this passenger appears more than once in the list');
      passengerIds.push(id);
    });
  }
  const quoteId = isAbsent(input.quoteId) ? undefined : readUuid(input.quoteId, 'quote_id', violations);
  let reason: CancelBookingCommand = {};
  try {
    reason = validateCancelBooking({ reason: input.reason });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    for (const violation of error.fieldViolations) violations.add(violation.field, violation.message);
  }
  violations.throwIfAny();
  return { passengerIds, ...(quoteId === undefined ? {} : { quoteId }), ...reason };
}
