// Partial cancellations and refund quotes: plans, each passenger's share, the rule's refund, and when a quote holds.
import type { BookingState, Passenger } from '../../../src/domain/booking';
import { applyDiscount } from '../../../src/domain/discount-codes';
import { DomainError } from '../../../src/domain/errors';
import { cancellationRefund } from '../../../src/domain/fares';
import { defaultPassengerTypes, priceParty, type TypedPassenger } from '../../../src/domain/passenger-types';
import {
  assertQuoteUsable,
  cancelledPassengersOf,
  keptFromCancelledPassengers,
  paidShares,
  planPassengerCancellation,
  quoteRefund,
  quoteValidUntil,
  refundQuoteValidityMs,
  type CancelledPassenger,
  type QuotableBooking,
} from '../../../src/domain/refund-quotes';
import { hourMs, minuteMs } from '../../../src/domain/time';
import {
  bookingId,
  confirmedState,
  departureTime,
  euros,
  farePrices,
  relativeToDeparture,
} from '../../support/booking-states';

function thrown(action: () => unknown): DomainError {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

type FamilyMember = Passenger & TypedPassenger;

const ids = {
  mother: 'aaaaaaaa-0000-4000-8000-000000000001',
  father: 'aaaaaaaa-0000-4000-8000-000000000002',
  child: 'aaaaaaaa-0000-4000-8000-000000000003',
  infant: 'aaaaaaaa-0000-4000-8000-000000000004',
};
const stranger = 'bbbbbbbb-0000-4000-8000-000000000009';

function member(id: string, seatNumber: string, passengerType: string, birthDate?: string): FamilyMember {
  return {
    id,
    firstName: 'Silva',
    lastName: passengerType,
    email: 'family@example.com',
    seatNumber,
    fareClass: 'STANDARD',
    passengerType,
    ...(birthDate === undefined ? {} : { birthDate }),
  };
}

const family: FamilyMember[] = [
  member(ids.mother, '3A', 'ADULT'),
  member(ids.father, '3B', 'ADULT'),
  member(ids.child, '3C', 'CHILD', '2018-06-15'),
  member(ids.infant, '', 'INFANT', '2025-01-10'),
];
const familyPrice = priceParty(family, farePrices, { types: defaultPassengerTypes, legCount: 1 });

/** The family's booking, paid in full: 25.00 + 25.00 + 12.50 + 0. */
function familyBooking(
  overrides: Partial<BookingState> & {
    passengers?: readonly FamilyMember[];
    cancelledPassengers?: readonly CancelledPassenger[];
  } = {},
): QuotableBooking<FamilyMember> {
  return {
    ...confirmedState({ price: familyPrice, amountPaid: euros(6250) }),
    passengers: family,
    ...overrides,
  };
}

const at = (offsetMs: number) => relativeToDeparture(offsetMs).toISOString();
const twoDaysBefore = at(-48 * hourMs);
const halfDayBefore = at(-12 * hourMs);

describe('planPassengerCancellation', () => {
  it('releases the seats of the passengers named and keeps everyone else', () => {
    const plan = planPassengerCancellation(familyBooking(), [ids.child.toUpperCase()], defaultPassengerTypes);
    expect(plan.passengerIds).toEqual([ids.child]);
    expect(plan.seatsToRelease).toEqual(['3C']);
    expect(plan.remainingPassengers.map((passenger) => passenger.id)).toEqual([
      ids.mother,
      ids.father,
      ids.infant,
    ]);
    expect(plan.remainingPrice.lines.map((line) => line.passengerId)).toEqual([
      ids.mother,
      ids.father,
      ids.infant,
    ]);
    expect(plan.remainingPrice.total).toEqual(euros(5000));
    expect(plan.cancelsBooking).toBe(false);
  });

  it('releases no seat for a lap infant', () => {
    expect(planPassengerCancellation(familyBooking(), [ids.infant]).seatsToRelease).toEqual([]);
  });

  it('cancels the booking when the last passengers go', () => {
    const plan = planPassengerCancellation(familyBooking(), [ids.infant, ids.child, ids.father, ids.mother]);
    expect(plan.cancelsBooking).toBe(true);
    expect(plan.seatsToRelease).toEqual(['3A', '3B', '3C']);
    expect(plan.remainingPassengers).toEqual([]);
    expect(plan.remainingPrice).toEqual({ lines: [], total: euros(0) });
  });

  it('keeps each remaining passenger’s share of a discount', () => {
    const discounted = applyDiscount(familyPrice, { code: 'FAMILY-10', kind: 'percent', value: 10 });
    const plan = planPassengerCancellation(familyBooking({ price: discounted }), [ids.father]);
    expect(
      plan.remainingPrice.lines.map((line) => [line.amount.amountMinor, line.discount?.amountMinor]),
    ).toEqual([
      [2250, 250],
      [1125, 125],
      [0, 0],
    ]);
    expect(plan.remainingPrice.total).toEqual(euros(3375));
    expect(plan.remainingPrice.discount).toEqual({
      code: 'FAMILY-10',
      kind: 'percent',
      value: 10,
      amount: euros(375),
    });
  });

  it('refuses an empty list, repeats, strangers, cancelled and boarded passengers, each by its place', () => {
    expect(thrown(() => planPassengerCancellation(familyBooking(), [])).fieldViolations).toEqual([
      { field: 'passenger_ids', message: 'must name at least one passenger' },
    ]);
    const booking = familyBooking({
      passengers: family.filter((passenger) => passenger.id !== ids.child),
      cancelledPassengers: [
        { passengerId: ids.child, cancelledAt: twoDaysBefore, paid: euros(1250), refund: euros(1250) },
      ],
      boardings: [{ passengerId: ids.father, boardedAt: departureTime, stopCode: 'LIS', actorId: 'driver' }],
    });
    const error = thrown(() =>
      planPassengerCancellation(booking, [ids.mother, ids.mother, stranger, ids.child, ids.father]),
    );
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.fieldViolations).toEqual([
      { field: 'passenger_ids[1]', message: 'this passenger appears more than once in the list' },
      { field: 'passenger_ids[2]', message: 'no passenger with this id belongs to the booking' },
      { field: 'passenger_ids[3]', message: 'this passenger was cancelled already' },
      { field: 'passenger_ids[4]', message: 'this passenger has boarded' },
    ]);
  });

  it('refuses to leave an infant without an adult', () => {
    const error = thrown(() =>
      planPassengerCancellation(familyBooking(), [ids.mother, ids.father], defaultPassengerTypes),
    );
    expect(error.fieldViolations).toEqual([
      {
        field: 'passenger_ids',
        message:
          'cancelling these passengers would break a rule of the others: a passenger of type INFANT travels with a passenger of type ADULT in the same booking',
      },
    ]);
    expect(() =>
      planPassengerCancellation(familyBooking(), [ids.mother], defaultPassengerTypes),
    ).not.toThrow();
  });

  it.each<BookingState['status']>(['CANCELLED', 'EXPIRED', 'COMPLETED'])('refuses a %s booking', (status) => {
    const error = thrown(() => planPassengerCancellation(familyBooking({ status }), [ids.child]));
    expect(error.code).toBe('BOOKING_STATE_CONFLICT');
    expect(error.details).toEqual({ status, action: 'cancel' });
  });
});

describe('paidShares', () => {
  it('is each line while the money covers the lines', () => {
    expect([...paidShares(familyBooking()).values()]).toEqual([
      euros(2500),
      euros(2500),
      euros(1250),
      euros(0),
    ]);
  });

  it('shares what was paid in proportion when it covers less, and nothing of an unpaid booking', () => {
    // 49.99 shared 2500:2500:1250 is 1999.6, 1999.6 and 999.8: the two units left go to the child, then the mother.
    const partlyRefunded = familyBooking({ amountRefunded: euros(1251) });
    expect([...paidShares(partlyRefunded).values()]).toEqual([
      euros(2000),
      euros(1999),
      euros(1000),
      euros(0),
    ]);
    expect([
      ...paidShares(familyBooking({ status: 'PENDING_PAYMENT', amountPaid: euros(0) })).values(),
    ]).toEqual([euros(0), euros(0), euros(0), euros(0)]);
  });

  it('leaves what was kept from a cancelled passenger out of the others’ shares', () => {
    const afterChild = familyBooking({
      passengers: family.filter((passenger) => passenger.id !== ids.child),
      price: {
        lines: familyPrice.lines.filter((line) => line.passengerId !== ids.child),
        total: euros(5000),
      },
      amountRefunded: euros(625),
    });
    expect([...paidShares(afterChild).values()]).toEqual([euros(2500), euros(2500), euros(0)]);
  });
});

describe('quoteRefund', () => {
  const quote = (booking: QuotableBooking<FamilyMember>, passengerIds: string[] | undefined, now: string) =>
    quoteRefund({ booking, passengerIds, id: 'quote-1', now, types: defaultPassengerTypes });

  it('quotes the child’s whole fare two days out, for ten minutes', () => {
    expect(quote(familyBooking(), [ids.child], twoDaysBefore)).toEqual({
      id: 'quote-1',
      bookingId,
      bookingVersion: 1,
      passengerIds: [ids.child],
      cancelsBooking: false,
      lines: [{ passengerId: ids.child, paid: euros(1250), refund: euros(1250) }],
      total: euros(1250),
      ruleName: 'standard-flexible',
      refundPercent: 100,
      quotedAt: twoDaysBefore,
      validUntil: at(-48 * hourMs + refundQuoteValidityMs),
    });
  });

  it('applies the rule’s share inside a day of departure, rounding down once for the passengers together', () => {
    const oddChild = familyBooking({
      price: {
        ...familyPrice,
        lines: familyPrice.lines.map((line) =>
          line.passengerId === ids.child ? { ...line, amount: euros(1255) } : line,
        ),
        total: euros(6255),
      },
      amountPaid: euros(6255),
    });
    const childOnly = quote(oddChild, [ids.child], halfDayBefore);
    expect(childOnly.refundPercent).toBe(50);
    expect(childOnly.total).toEqual(euros(627));
    const childAndFather = quote(oddChild, [ids.child, ids.father], halfDayBefore);
    // 50 % of 37.55 is 18.775, rounded down to 18.77 and shared 1255:2500 (627.33 and 1249.67).
    expect(childAndFather.total).toEqual(euros(1877));
    expect(childAndFather.lines.map((line) => line.refund)).toEqual([euros(627), euros(1250)]);
  });

  it('quotes the whole booking as its cancellation refunds it', () => {
    const booking = familyBooking();
    const whole = quote(booking, undefined, halfDayBefore);
    expect(whole.cancelsBooking).toBe(true);
    expect(whole.passengerIds).toEqual([ids.mother, ids.father, ids.child, ids.infant]);
    expect(whole.total).toEqual(cancellationRefund(booking, halfDayBefore));
    expect(whole.lines.map((line) => line.refund)).toEqual([euros(1250), euros(1250), euros(625), euros(0)]);
  });

  it('quotes nothing back for a booking not paid yet, and nothing after departure', () => {
    expect(
      quote(familyBooking({ status: 'PENDING_PAYMENT', amountPaid: euros(0) }), [ids.child], twoDaysBefore)
        .total,
    ).toEqual(euros(0));
    const afterDeparture = quote(familyBooking(), [ids.child], at(hourMs));
    expect(afterDeparture.total).toEqual(euros(0));
    expect(afterDeparture.refundPercent).toBe(0);
  });

  it('shares the refund of a discounted booking by what each paid', () => {
    const discounted = applyDiscount(familyPrice, {
      code: 'FIVE-OFF',
      kind: 'amount',
      value: 500,
      currency: 'EUR',
    });
    const booking = familyBooking({ price: discounted, amountPaid: discounted.total });
    expect(quote(booking, [ids.child], twoDaysBefore).lines).toEqual([
      { passengerId: ids.child, paid: euros(1150), refund: euros(1150) },
    ]);
  });

  it('refuses what planPassengerCancellation refuses', () => {
    expect(thrown(() => quote(familyBooking(), [stranger], twoDaysBefore)).fieldViolations).toEqual([
      { field: 'passenger_ids[0]', message: 'no passenger with this id belongs to the booking' },
    ]);
  });

  it('records the cancelled passengers as the quote says, and what was kept of them', () => {
    const childQuote = quote(familyBooking(), [ids.child], halfDayBefore);
    const cancelled = cancelledPassengersOf(childQuote, halfDayBefore);
    expect(cancelled).toEqual([
      { passengerId: ids.child, cancelledAt: halfDayBefore, paid: euros(1250), refund: euros(625) },
    ]);
    expect(keptFromCancelledPassengers(cancelled, 'EUR')).toEqual(euros(625));
    expect(keptFromCancelledPassengers(undefined, 'EUR')).toEqual(euros(0));
  });
});

describe('quoteValidUntil', () => {
  const booking = familyBooking();

  it('holds ten minutes, unless the rule changes first', () => {
    expect(quoteValidUntil(booking, twoDaysBefore)).toBe(at(-48 * hourMs + 10 * minuteMs));
    expect(quoteValidUntil(booking, at(-24 * hourMs - 3 * minuteMs))).toBe(at(-24 * hourMs));
    expect(quoteValidUntil(booking, at(-4 * minuteMs))).toBe(departureTime);
    expect(quoteValidUntil(booking, twoDaysBefore, 30 * minuteMs)).toBe(at(-48 * hourMs + 30 * minuteMs));
  });

  it('holds its ten minutes after departure, when the share no longer changes', () => {
    expect(quoteValidUntil(booking, departureTime)).toBe(at(10 * minuteMs));
  });
});

describe('assertQuoteUsable', () => {
  const childQuote = quoteRefund({
    booking: familyBooking(),
    passengerIds: [ids.child],
    id: 'quote-1',
    now: twoDaysBefore,
  });
  const context = {
    bookingId,
    passengerIds: [ids.child],
    now: at(-48 * hourMs + 9 * minuteMs),
    bookingVersion: 1,
  };

  it('lets a cancellation of the quoted passengers use the quote until it ends', () => {
    expect(() => assertQuoteUsable(childQuote, context)).not.toThrow();
    expect(() =>
      assertQuoteUsable(childQuote, { bookingId: bookingId.toUpperCase(), now: twoDaysBefore }),
    ).not.toThrow();
    const pair = quoteRefund({
      booking: familyBooking(),
      passengerIds: [ids.child, ids.infant],
      id: 'q',
      now: twoDaysBefore,
    });
    expect(() =>
      assertQuoteUsable(pair, { ...context, passengerIds: [ids.infant, ids.child.toUpperCase()] }),
    ).not.toThrow();
  });

  it.each<[string, Partial<typeof context>, string, string]>([
    ['another booking', { bookingId: stranger }, 'QUOTE_INVALID', 'other_booking'],
    ['other passengers', { passengerIds: [ids.child, ids.infant] }, 'QUOTE_INVALID', 'other_passengers'],
    ['fewer passengers', { passengerIds: [ids.father] }, 'QUOTE_INVALID', 'other_passengers'],
    ['a changed booking', { bookingVersion: 2 }, 'QUOTE_INVALID', 'booking_changed'],
  ])('refuses %s', (_case, change, code, reason) => {
    const error = thrown(() => assertQuoteUsable(childQuote, { ...context, ...change }));
    expect(error.code).toBe(code);
    expect(error.details).toEqual({ quoteId: 'quote-1', reason });
  });

  it('refuses a quote from the instant it ends', () => {
    const error = thrown(() => assertQuoteUsable(childQuote, { ...context, now: childQuote.validUntil }));
    expect(error.code).toBe('QUOTE_EXPIRED');
    expect(error.mapping).toMatchObject({ httpStatus: 409, grpcStatus: 'FAILED_PRECONDITION' });
    expect(error.message).toBe(
      `Refund quote quote-1 held until ${childQuote.validUntil}; ask for a new quote`,
    );
    expect(error.details).toEqual({ quoteId: 'quote-1', validUntil: childQuote.validUntil });
  });
});
