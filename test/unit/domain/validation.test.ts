// Input validation: typed commands out, or one VALIDATION_FAILED naming every bad field.
import { expect } from '@jest/globals';
import { DomainError, type FieldViolation } from '../../../src/domain/errors';
import {
  defaultHoldDurationMs,
  isE164Phone,
  isEmail,
  isIdempotencyKey,
  isSeatNumber,
  isUuid,
  nulCharacterViolations,
  validateCancelBooking,
  validateCancelPassengers,
  validateConfirmPayment,
  validateCreateBooking,
  validateId,
  validateUpdateBooking,
  type CreateBookingInput,
  type UpdateBookingInput,
} from '../../../src/domain/validation';
import { firstPassengerId, passengers, secondPassengerId } from '../../support/booking-states';

const tripId = '55555555-5555-4555-8555-555555555555';

function violationsOf(action: () => unknown): FieldViolation[] {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'VALIDATION_FAILED') return [...error.fieldViolations];
    throw error;
  }
  throw new Error('expected VALIDATION_FAILED');
}

function fieldsOf(action: () => unknown): string[] {
  return violationsOf(action).map((violation) => violation.field);
}

function passengerInput(overrides: Record<string, unknown> = {}) {
  return {
    firstName: '  Ana ',
    lastName: 'Silva',
    email: 'ana@example.com',
    phone: '+351912345678',
    seatNumber: '12C',
    fareClass: 'STANDARD',
    ...overrides,
  };
}

function createInput(overrides: Partial<CreateBookingInput> = {}): CreateBookingInput {
  return { tripId, passengers: [passengerInput()], contactEmail: 'ana@example.com', ...overrides };
}

describe('field syntax', () => {
  it.each(['1A', '9F', '12C', '99A'])('accepts seat %s', (seat) => expect(isSeatNumber(seat)).toBe(true));
  it.each(['0A', '100A', '12G', '12c', 'A12', '01A', ''])('rejects seat %s', (seat) =>
    expect(isSeatNumber(seat)).toBe(false),
  );
  it.each(['+351912345678', '+14155552671', '+12'])('accepts phone %s', (phone) =>
    expect(isE164Phone(phone)).toBe(true),
  );
  it.each(['351912345678', '+0123', '+1 415 555 2671', '+1234567890123456', '+1'])(
    'rejects phone %s',
    (phone) => expect(isE164Phone(phone)).toBe(false),
  );
  it.each(['ana@example.com', 'a.b+tag@sub.example.pt'])('accepts email %s', (email) =>
    expect(isEmail(email)).toBe(true),
  );
  it.each(['ana', 'ana@', '@example.com', 'ana@localhost', 'ana @example.com', 'ana@exa_mple.com'])(
    'rejects email %s',
    (email) => expect(isEmail(email)).toBe(false),
  );
  it('rejects an email longer than 254 characters', () => {
    expect(isEmail(`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.pt`)).toBe(false);
  });
  it('accepts UUIDs in either case and nothing else', () => {
    expect(isUuid(tripId)).toBe(true);
    expect(isUuid(tripId.toUpperCase())).toBe(true);
    expect(isUuid('55555555555545558555555555555555')).toBe(false);
    expect(isUuid(42)).toBe(false);
  });
});

describe('validateCreateBooking', () => {
  it('takes the stop codes of the segment, each optional, and names a malformed one', () => {
    expect(validateCreateBooking({ ...createInput(), boardingStop: 'HAJ' })).toMatchObject({
      boardingStopCode: 'HAJ',
    });
    expect(validateCreateBooking(createInput())).not.toHaveProperty('alightingStopCode');
    expect(fieldsOf(() => validateCreateBooking({ ...createInput(), alightingStop: 'Berlin Hbf' }))).toEqual([
      'alighting_stop',
    ]);
  });

  it('returns a typed command with trimmed names', () => {
    expect(validateCreateBooking(createInput({ contactPhone: '+351912345678' }))).toEqual({
      tripId,
      passengers: [
        {
          firstName: 'Ana',
          lastName: 'Silva',
          email: 'ana@example.com',
          phone: '+351912345678',
          seatNumber: '12C',
          fareClass: 'STANDARD',
        },
      ],
      contactEmail: 'ana@example.com',
      contactPhone: '+351912345678',
    });
  });

  it('treats undefined, null and empty optional phones as absent', () => {
    for (const absent of [undefined, null, '']) {
      const command = validateCreateBooking(
        createInput({ contactPhone: absent, passengers: [passengerInput({ phone: absent })] }),
      );
      expect(command).not.toHaveProperty('contactPhone');
      expect(command.passengers[0]).not.toHaveProperty('phone');
    }
  });

  it('lists every violation with its field path', () => {
    const violations = violationsOf(() =>
      validateCreateBooking({
        tripId: 'trip-1',
        contactEmail: 'nope',
        contactPhone: '912345678',
        passengers: [
          passengerInput(),
          passengerInput({
            firstName: '   ',
            lastName: 'x'.repeat(101),
            email: 'bad',
            phone: '12',
            seatNumber: '0Z',
            fareClass: 'FIRST',
          }),
          'not an object',
        ],
      }),
    );
    expect(violations.map((violation) => violation.field)).toEqual([
      'trip_id',
      'contact_email',
      'contact_phone',
      'passengers[1].first_name',
      'passengers[1].last_name',
      'passengers[1].email',
      'passengers[1].phone',
      'passengers[1].seat_number',
      'passengers[1].fare_class',
      'passengers[2]',
    ]);
    expect(violations.every((violation) => violation.message.length > 0)).toBe(true);
  });

  it('never echoes the rejected values (they may be personal data)', () => {
    const violations = violationsOf(() =>
      validateCreateBooking(createInput({ contactEmail: 'secret-person@nowhere' })),
    );
    expect(JSON.stringify(violations)).not.toContain('secret-person');
  });

  it('rejects names with control characters and counts characters, not bytes', () => {
    expect(
      fieldsOf(() =>
        validateCreateBooking(createInput({ passengers: [passengerInput({ lastName: 'Sil\u0000va' })] })),
      ),
    ).toEqual(['passengers[0].last_name']);
    const hundredAccented = 'é'.repeat(100);
    expect(
      validateCreateBooking(createInput({ passengers: [passengerInput({ lastName: hundredAccented })] }))
        .passengers[0].lastName,
    ).toBe(hundredAccented);
  });

  it('requires 1 to 9 passengers, the limit being a parameter', () => {
    expect(fieldsOf(() => validateCreateBooking(createInput({ passengers: [] })))).toEqual(['passengers']);
    expect(fieldsOf(() => validateCreateBooking(createInput({ passengers: undefined })))).toEqual([
      'passengers',
    ]);
    const ten = Array.from({ length: 10 }, (_, index) => passengerInput({ seatNumber: `${index + 1}A` }));
    expect(fieldsOf(() => validateCreateBooking(createInput({ passengers: ten })))).toEqual(['passengers']);
    expect(validateCreateBooking(createInput({ passengers: ten.slice(0, 9) })).passengers).toHaveLength(9);
    expect(
      fieldsOf(() =>
        validateCreateBooking(createInput({ passengers: ten.slice(0, 3) }), { maxPassengers: 2 }),
      ),
    ).toEqual(['passengers']);
  });

  it('rejects the same seat given to two passengers', () => {
    const sameSeat = [
      passengerInput(),
      passengerInput({ firstName: 'Rui' }),
      passengerInput({ seatNumber: '1A' }),
    ];
    expect(fieldsOf(() => validateCreateBooking(createInput({ passengers: sameSeat })))).toEqual([
      'passengers[0].seat_number',
      'passengers[1].seat_number',
    ]);
  });
});

describe('validateUpdateBooking', () => {
  const current = { passengers };

  it('reads a segment change, alone or with detail updates, never with seat changes or added passengers', () => {
    expect(validateUpdateBooking({ alightingStop: 'HAJ' }, current)).toMatchObject({
      segmentChange: { alightingStopCode: 'HAJ' },
    });
    expect(fieldsOf(() => validateUpdateBooking({ boardingStop: 'hannover' }, current))).toEqual([
      'boarding_stop',
    ]);
    expect(
      fieldsOf(() =>
        validateUpdateBooking(
          { boardingStop: 'HAJ', seatChanges: [{ passengerId: firstPassengerId, seatNumber: '4A' }] },
          current,
        ),
      ),
    ).toEqual(['boarding_stop']);
  });

  it('returns a typed command; an omitted fare class keeps the passenger’s', () => {
    const command = validateUpdateBooking(
      {
        seatChanges: [{ passengerId: firstPassengerId, seatNumber: '4A' }],
        addPassengers: [passengerInput({ seatNumber: '3C' })],
        passengerUpdates: [{ passengerId: secondPassengerId, email: 'rui.costa@example.com', phone: '' }],
      },
      current,
    );
    expect(command).toEqual({
      seatChanges: [{ passengerId: firstPassengerId, seatNumber: '4A', fareClass: 'STANDARD' }],
      addPassengers: [expect.objectContaining({ firstName: 'Ana', seatNumber: '3C' })],
      passengerUpdates: [{ passengerId: secondPassengerId, email: 'rui.costa@example.com' }],
    });
  });

  it('accepts a seat change to another fare class, and a swap of seats within the booking', () => {
    expect(
      validateUpdateBooking(
        { seatChanges: [{ passengerId: firstPassengerId, seatNumber: '1A', fareClass: 'PREMIUM' }] },
        current,
      ).seatChanges,
    ).toEqual([{ passengerId: firstPassengerId, seatNumber: '1A', fareClass: 'PREMIUM' }]);
    const swap: UpdateBookingInput = {
      seatChanges: [
        { passengerId: firstPassengerId, seatNumber: '3B' },
        { passengerId: secondPassengerId, seatNumber: '3A' },
      ],
    };
    expect(validateUpdateBooking(swap, current).seatChanges).toHaveLength(2);
  });

  it('requires the update to change something', () => {
    expect(violationsOf(() => validateUpdateBooking({}, current))).toEqual([
      {
        field: '',
        message: 'an update must give at least one of seat_changes, add_passengers or passenger_updates',
      },
    ]);
    expect(
      fieldsOf(() =>
        validateUpdateBooking({ seatChanges: [], addPassengers: [], passengerUpdates: [] }, current),
      ),
    ).toEqual(['']);
    expect(
      fieldsOf(() =>
        validateUpdateBooking(
          {
            seatChanges: [{ passengerId: firstPassengerId, seatNumber: '3A' }],
            passengerUpdates: [
              { passengerId: firstPassengerId, firstName: ' Ana ' },
              { passengerId: secondPassengerId },
            ],
          },
          current,
        ),
      ),
    ).toEqual(['seat_changes[0]', 'passenger_updates[0]', 'passenger_updates[1]']);
  });

  it('keeps a seat’s fare class: changing class means choosing another seat', () => {
    expect(
      violationsOf(() =>
        validateUpdateBooking(
          { seatChanges: [{ passengerId: firstPassengerId, seatNumber: '3A', fareClass: 'PREMIUM' }] },
          current,
        ),
      ),
    ).toEqual([{ field: 'seat_changes[0]', message: 'to change fare class choose a seat of that class' }]);
  });

  it('requires seat changes and detail updates to name passengers of the booking, once each', () => {
    const stranger = '99999999-9999-4999-8999-999999999999';
    expect(
      fieldsOf(() =>
        validateUpdateBooking(
          {
            seatChanges: [
              { passengerId: stranger, seatNumber: '5A' },
              { passengerId: 'not-a-uuid', seatNumber: '5B' },
              { passengerId: firstPassengerId, seatNumber: '5C' },
              { passengerId: firstPassengerId, seatNumber: '5D' },
            ],
            passengerUpdates: [{ passengerId: stranger, firstName: 'Eve' }],
          },
          current,
        ),
      ),
    ).toEqual([
      'seat_changes[0].passenger_id',
      'seat_changes[1].passenger_id',
      'seat_changes[3].passenger_id',
      'passenger_updates[0].passenger_id',
    ]);
  });

  it('rejects a seat that would end up with two passengers', () => {
    expect(
      fieldsOf(() =>
        validateUpdateBooking(
          {
            seatChanges: [{ passengerId: firstPassengerId, seatNumber: '3B' }],
            addPassengers: [passengerInput({ seatNumber: '3B' }), passengerInput({ seatNumber: '3C' })],
          },
          current,
        ),
      ),
    ).toEqual(['seat_changes[0].seat_number', 'add_passengers[0].seat_number']);
  });

  it('validates added passengers and the passenger limit', () => {
    expect(
      fieldsOf(() => validateUpdateBooking({ addPassengers: [passengerInput({ email: 'x' })] }, current)),
    ).toEqual(['add_passengers[0].email']);
    const added = Array.from({ length: 8 }, (_, index) => passengerInput({ seatNumber: `${index + 10}A` }));
    expect(fieldsOf(() => validateUpdateBooking({ addPassengers: added }, current))).toEqual([
      'add_passengers',
    ]);
    expect(
      fieldsOf(() =>
        validateUpdateBooking({ addPassengers: added.slice(0, 1) }, current, { maxPassengers: 2 }),
      ),
    ).toEqual(['add_passengers']);
  });

  it('validates edited details field by field', () => {
    expect(
      fieldsOf(() =>
        validateUpdateBooking(
          {
            passengerUpdates: [
              { passengerId: firstPassengerId, firstName: '', lastName: 7, email: 'x@y', phone: '00351' },
            ],
          },
          current,
        ),
      ),
    ).toEqual(['passenger_updates[0].last_name', 'passenger_updates[0].email', 'passenger_updates[0].phone']);
  });

  it('rejects lists that are not lists', () => {
    expect(fieldsOf(() => validateUpdateBooking({ seatChanges: 'all', addPassengers: {} }, current))).toEqual(
      ['seat_changes', 'add_passengers'],
    );
  });
});

describe('other inputs', () => {
  it('validates a cancellation reason', () => {
    expect(validateCancelBooking({})).toEqual({});
    expect(validateCancelBooking({ reason: '  ' })).toEqual({});
    expect(validateCancelBooking({ reason: ' plans changed\nsorry ' })).toEqual({
      reason: 'plans changed\nsorry',
    });
    expect(fieldsOf(() => validateCancelBooking({ reason: 'x'.repeat(501) }))).toEqual(['reason']);
    expect(fieldsOf(() => validateCancelBooking({ reason: 'bell\u0007' }))).toEqual(['reason']);
    expect(fieldsOf(() => validateCancelBooking({ reason: 3 }))).toEqual(['reason']);
  });

  it('validates a partial cancellation: 1 to max passenger ids, none twice, an optional quote id and reason', () => {
    const quoteId = 'C5D6E7F8-0000-4000-8000-000000000001';
    expect(
      validateCancelPassengers({
        passengerIds: [firstPassengerId.toUpperCase(), secondPassengerId],
        quoteId,
        reason: ' ill ',
      }),
    ).toEqual({
      passengerIds: [firstPassengerId, secondPassengerId],
      quoteId: quoteId.toLowerCase(),
      reason: 'ill',
    });
    expect(validateCancelPassengers({ passengerIds: [firstPassengerId], quoteId: '' })).toEqual({
      passengerIds: [firstPassengerId],
    });
    expect(violationsOf(() => validateCancelPassengers({}))).toEqual([
      { field: 'passenger_ids', message: 'is required and must be a list of passenger ids' },
    ]);
    expect(violationsOf(() => validateCancelPassengers({ passengerIds: [] }))).toEqual([
      { field: 'passenger_ids', message: 'must name 1 to 9 passengers' },
    ]);
    expect(
      fieldsOf(() =>
        validateCancelPassengers({ passengerIds: [firstPassengerId, firstPassengerId], reason: 7 }),
      ),
    ).toEqual(['passenger_ids[1]', 'reason']);
    expect(
      violationsOf(() =>
        validateCancelPassengers({ passengerIds: [firstPassengerId, 'not-a-uuid', 42], quoteId: 'q-1' }),
      ),
    ).toEqual([
      { field: 'passenger_ids[1]', message: 'must be a UUID' },
      { field: 'passenger_ids[2]', message: 'must be a UUID' },
      { field: 'quote_id', message: 'must be a UUID' },
    ]);
    expect(
      fieldsOf(() =>
        validateCancelPassengers(
          { passengerIds: [firstPassengerId, secondPassengerId] },
          { maxPassengers: 1 },
        ),
      ),
    ).toEqual(['passenger_ids']);
  });

  it('validates a payment token', () => {
    expect(validateConfirmPayment({ paymentToken: 'tok_visa' })).toEqual({ paymentToken: 'tok_visa' });
    expect(fieldsOf(() => validateConfirmPayment({}))).toEqual(['payment_token']);
    expect(fieldsOf(() => validateConfirmPayment({ paymentToken: 'tok visa' }))).toEqual(['payment_token']);
  });

  it('takes a payment method id instead of a token, never both', () => {
    expect(validateConfirmPayment({ paymentMethod: 'pm_card_visa' })).toEqual({
      paymentToken: 'pm_card_visa',
    });
    expect(fieldsOf(() => validateConfirmPayment({ paymentMethod: 'tok_visa' }))).toEqual(['payment_method']);
    expect(fieldsOf(() => validateConfirmPayment({ paymentToken: 'pm_card_visa' }))).toEqual([
      'payment_token',
    ]);
    expect(
      fieldsOf(() => validateConfirmPayment({ paymentToken: 'tok_visa', paymentMethod: 'pm_card_visa' })),
    ).toEqual(['payment_method']);
  });

  it('validates ids under the given field name and normalises case', () => {
    expect(validateId(tripId.toUpperCase(), 'booking_id')).toBe(tripId);
    expect(violationsOf(() => validateId('42', 'booking_id'))).toEqual([
      { field: 'booking_id', message: 'must be a UUID' },
    ]);
  });
});

describe('whole values only', () => {
  const uuid = '5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';

  it('matches an id, seat, phone, email, payment token or idempotency key only as the whole value', () => {
    expect([isUuid(`x${uuid}`), isUuid(`${uuid}x`)]).toEqual([false, false]);
    expect(isSeatNumber('12CX')).toBe(false);
    expect(isE164Phone('x+351912345678')).toBe(false);
    expect([isEmail('ana silva@example.com'), isEmail('ana@example.com x')]).toEqual([false, false]);
    for (const paymentToken of ['xtok_visa', 'tok_visa!']) {
      expect(fieldsOf(() => validateConfirmPayment({ paymentToken }))).toEqual(['payment_token']);
    }
    expect([isIdempotencyKey(' key'), isIdempotencyKey('key ')]).toEqual([false, false]);
  });

  it('takes strings only, not lists that would print as one', () => {
    expect(isUuid([uuid])).toBe(false);
    expect(isSeatNumber(['12C'])).toBe(false);
    expect(isE164Phone(['+351912345678'])).toBe(false);
    expect(isEmail(['ana@example.com'])).toBe(false);
    expect(isIdempotencyKey(['key'])).toBe(false);
  });
});

describe('field limits at their boundaries', () => {
  it('accepts one-character domain labels in emails, and an email of exactly 254 characters', () => {
    expect(isEmail('ana@x.pt')).toBe(true);
    expect(isEmail('ana@mail.x.pt')).toBe(true);
    const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.pt`;
    expect(longest).toHaveLength(254);
    expect(isEmail(longest)).toBe(true);
  });

  it('accepts a one-character name', () => {
    const command = validateCreateBooking(createInput({ passengers: [passengerInput({ firstName: 'A' })] }));
    expect(command.passengers[0].firstName).toBe('A');
  });

  it('accepts a cancellation reason of exactly 500 characters', () => {
    expect(validateCancelBooking({ reason: 'x'.repeat(500) })).toEqual({ reason: 'x'.repeat(500) });
  });

  it('accepts a payment token of exactly 128 characters, and not one more', () => {
    const longest = `tok_${'a'.repeat(124)}`;
    expect(validateConfirmPayment({ paymentToken: longest })).toEqual({ paymentToken: longest });
    expect(fieldsOf(() => validateConfirmPayment({ paymentToken: `${longest}a` }))).toEqual([
      'payment_token',
    ]);
  });

  it('accepts an idempotency key of 1 to 255 of letters, digits and . _ : -', () => {
    expect(isIdempotencyKey('a')).toBe(true);
    expect(isIdempotencyKey('order-42_retry.1:a')).toBe(true);
    expect(isIdempotencyKey('k'.repeat(255))).toBe(true);
    expect(isIdempotencyKey('k'.repeat(256))).toBe(false);
    expect(isIdempotencyKey('')).toBe(false);
    expect(isIdempotencyKey('key/1')).toBe(false);
  });

  it('lets an update fill the booking up to the passenger limit exactly', () => {
    const added = Array.from({ length: 7 }, (_, index) => passengerInput({ seatNumber: `${index + 10}A` }));
    expect(validateUpdateBooking({ addPassengers: added }, { passengers }).addPassengers).toHaveLength(7);
  });
});

describe('normalising accepted values', () => {
  it('trims emails and phones, and lower-cases ids', () => {
    const command = validateCreateBooking(
      createInput({
        tripId: 'ABCDEF12-3456-4789-8ABC-DEF012345678',
        contactEmail: ' ana@example.com ',
        contactPhone: ' +351912345678 ',
      }),
    );
    expect(command.tripId).toBe('abcdef12-3456-4789-8abc-def012345678');
    expect(command.contactEmail).toBe('ana@example.com');
    expect(command.contactPhone).toBe('+351912345678');
  });

  it('answers a non-string email or phone with a violation, not a crash', () => {
    expect(
      fieldsOf(() => validateCreateBooking(createInput({ contactEmail: 42, contactPhone: 351912345678 }))),
    ).toEqual(['contact_email', 'contact_phone']);
  });
});

describe('update shapes', () => {
  const current = { passengers };
  const seatChange = { passengerId: firstPassengerId, seatNumber: '4A' };
  const detailUpdate = { passengerId: secondPassengerId, lastName: 'Costa Pereira' };

  it.each<[string, UpdateBookingInput]>([
    ['only adds a passenger', { addPassengers: [passengerInput({ seatNumber: '3C' })] }],
    ['only edits details', { passengerUpdates: [detailUpdate] }],
    ['changes a seat and adds a passenger', { seatChanges: [seatChange], addPassengers: [passengerInput()] }],
    [
      'adds a passenger and edits details',
      { addPassengers: [passengerInput()], passengerUpdates: [detailUpdate] },
    ],
  ])('accepts an update that %s', (_name, input) => {
    expect(() => validateUpdateBooking(input, current)).not.toThrow();
  });

  it('names a bad seat number and fare class of a seat change by their entry', () => {
    expect(
      fieldsOf(() =>
        validateUpdateBooking(
          { seatChanges: [{ passengerId: firstPassengerId, seatNumber: 'ZZ', fareClass: 'FIRST' }] },
          current,
        ),
      ),
    ).toEqual(['seat_changes[0].seat_number', 'seat_changes[0].fare_class']);
  });

  it('names entries that are not objects, and a passenger_updates that is not a list', () => {
    expect(
      fieldsOf(() => validateUpdateBooking({ seatChanges: [42], passengerUpdates: ['x'] }, current)),
    ).toEqual(['seat_changes[0]', 'passenger_updates[0]']);
    expect(fieldsOf(() => validateUpdateBooking({ passengerUpdates: 'all' }, current))).toEqual([
      'passenger_updates',
    ]);
  });
});

describe('nulCharacterViolations', () => {
  const nul = '\u0000';

  it('finds nothing in a clean request', () => {
    expect(
      nulCharacterViolations({ name: 'Ana', seats: ['1A'], nested: { count: 2, when: new Date(0) } }),
    ).toEqual([]);
  });

  it('names every string holding U+0000 by its contract path, in request order', () => {
    const request = {
      trip: `a${nul}`,
      passengers: [{ name: 'Ana' }, { name: `R${nul}ui`, tags: ['x', nul] }],
    };
    expect(nulCharacterViolations(request).map((violation) => violation.field)).toEqual([
      'trip',
      'passengers[1].name',
      'passengers[1].tags[1]',
    ]);
  });

  it('starts from the given field and turns property keys into contract names', () => {
    const snakeCase = (key: string) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
    expect(nulCharacterViolations({ firstName: nul }, 'passengers[0]', snakeCase)).toEqual([
      { field: 'passengers[0].first_name', message: 'must not contain the NUL character (U+0000)' },
    ]);
    expect(nulCharacterViolations(`x${nul}`, 'reason')).toEqual([
      { field: 'reason', message: 'must not contain the NUL character (U+0000)' },
    ]);
  });

  it('refuses a property name holding U+0000 on the object that has it', () => {
    expect(nulCharacterViolations({ passengers: [{ [`na${nul}me`]: 'Ana' }] })).toEqual([
      { field: 'passengers[0]', message: 'property names must not contain the NUL character (U+0000)' },
    ]);
  });

  it('passes over nulls, numbers and booleans', () => {
    expect(nulCharacterViolations({ phone: null, count: 2, paid: false, list: [null] })).toEqual([]);
  });

  it('reports at most 50 violations', () => {
    expect(nulCharacterViolations(Array.from({ length: 80 }, () => nul))).toHaveLength(50);
  });

  it('looks inside plain objects only, not class instances', () => {
    class Carrier {
      readonly text = nul;
    }
    expect(nulCharacterViolations({ carrier: new Carrier() })).toEqual([]);
    expect(
      nulCharacterViolations({ bare: Object.assign(Object.create(null) as object, { text: nul }) }),
    ).toHaveLength(1);
  });
});

describe('defaultHoldDurationMs', () => {
  it('holds seats for 15 minutes', () => {
    expect(defaultHoldDurationMs).toBe(15 * 60_000);
  });
});
