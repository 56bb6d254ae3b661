// Planning an update: new passengers and price, seats to hold and free, and the money to move.
import { DomainError } from '../../../src/domain/errors';
import { planBookingChange } from '../../../src/domain/changes';
import { priceBooking } from '../../../src/domain/fares';
import type { UpdateBookingCommand } from '../../../src/domain/validation';
import {
  addedPassengerId,
  bookingState,
  confirmedState,
  euros,
  farePrices,
  firstPassengerId,
  passengers,
  secondPassengerId,
} from '../../support/booking-states';

function command(overrides: Partial<UpdateBookingCommand>): UpdateBookingCommand {
  return { seatChanges: [], addPassengers: [], passengerUpdates: [], ...overrides };
}

const newcomer = {
  firstName: 'Eva',
  lastName: 'Reis',
  email: 'eva@example.com',
  seatNumber: '3C',
  fareClass: 'STANDARD' as const,
};

describe('planBookingChange', () => {
  it('upgrades a confirmed passenger: reserve the new seat, release the old, charge the difference', () => {
    const plan = planBookingChange(
      confirmedState(),
      command({ seatChanges: [{ passengerId: firstPassengerId, seatNumber: '1A', fareClass: 'PREMIUM' }] }),
      [],
      farePrices,
    );
    expect(plan.passengers[0]).toEqual({ ...passengers[0], seatNumber: '1A', fareClass: 'PREMIUM' });
    expect(plan.seatsToReserve).toEqual([{ seatNumber: '1A', fareClass: 'PREMIUM' }]);
    expect(plan.seatsToRelease).toEqual(['3A']);
    expect(plan.price.total).toEqual(euros(6500));
    expect(plan.priceDelta).toEqual(euros(1500));
    expect(plan.settlement).toEqual({ kind: 'CHARGE', amount: euros(1500) });
  });

  it('downgrades a confirmed passenger with a refund of the difference', () => {
    const premium = passengers.map((passenger) => ({ ...passenger, fareClass: 'PREMIUM' as const }));
    const state = confirmedState({ passengers: premium, price: priceBooking(premium, farePrices) });
    const plan = planBookingChange(
      state,
      command({ seatChanges: [{ passengerId: secondPassengerId, seatNumber: '9D', fareClass: 'STANDARD' }] }),
      [],
      farePrices,
    );
    expect(plan.settlement).toEqual({ kind: 'REFUND', amount: euros(1500) });
  });

  it('adds a passenger to a pending booking: the amount due grows, no money moves', () => {
    const plan = planBookingChange(
      bookingState(),
      command({ addPassengers: [newcomer] }),
      [addedPassengerId],
      farePrices,
    );
    expect(plan.passengers).toHaveLength(3);
    expect(plan.passengers[2]).toEqual({ id: addedPassengerId, ...newcomer });
    expect(plan.price.lines[2]).toEqual({
      passengerId: addedPassengerId,
      seatNumber: '3C',
      fareClass: 'STANDARD',
      amount: euros(2500),
    });
    expect(plan.seatsToReserve).toEqual([{ seatNumber: '3C', fareClass: 'STANDARD' }]);
    expect(plan.seatsToRelease).toEqual([]);
    expect(plan.settlement).toEqual({ kind: 'AMOUNT_DUE_CHANGED', amount: euros(2500) });
  });

  it('swaps seats inside the booking without holding or freeing anything', () => {
    const plan = planBookingChange(
      confirmedState(),
      command({
        seatChanges: [
          { passengerId: firstPassengerId, seatNumber: '3B', fareClass: 'STANDARD' },
          { passengerId: secondPassengerId, seatNumber: '3A', fareClass: 'STANDARD' },
        ],
      }),
      [],
      farePrices,
    );
    expect(plan.seatsToReserve).toEqual([]);
    expect(plan.seatsToRelease).toEqual([]);
    expect(plan.settlement.kind).toBe('NONE');
  });

  it('edits passenger details without touching seats or price', () => {
    const plan = planBookingChange(
      confirmedState(),
      command({ passengerUpdates: [{ passengerId: secondPassengerId, phone: '+351911111111' }] }),
      [],
      farePrices,
    );
    expect(plan.passengers[1]).toEqual({ ...passengers[1], phone: '+351911111111' });
    expect(plan.passengers[1]).not.toHaveProperty('passengerId');
    expect(plan.seatsToReserve).toEqual([]);
    expect(plan.settlement.kind).toBe('NONE');
  });

  it('points an unsold fare class at the request entry that asked for it', () => {
    const standardOnly = { STANDARD: euros(2500) };
    const error = (() => {
      try {
        planBookingChange(
          confirmedState(),
          command({
            seatChanges: [{ passengerId: secondPassengerId, seatNumber: '1B', fareClass: 'PREMIUM' }],
            addPassengers: [{ ...newcomer, fareClass: 'PREMIUM' }],
          }),
          [addedPassengerId],
          standardOnly,
        );
      } catch (caught) {
        return caught as DomainError;
      }
      throw new Error('expected VALIDATION_FAILED');
    })();
    expect(error.fieldViolations.map((violation) => violation.field)).toEqual([
      'seat_changes[0].fare_class',
      'add_passengers[0].fare_class',
    ]);
  });

  it('points a class the trip no longer sells, kept by an unchanged passenger, at that passenger', () => {
    const premiumOnly = { PREMIUM: euros(4000) };
    const error = (() => {
      try {
        planBookingChange(
          confirmedState(),
          command({
            seatChanges: [{ passengerId: secondPassengerId, seatNumber: '1B', fareClass: 'PREMIUM' }],
          }),
          [],
          premiumOnly,
        );
      } catch (caught) {
        return caught as DomainError;
      }
      throw new Error('expected VALIDATION_FAILED');
    })();
    expect(error.fieldViolations.map((violation) => violation.field)).toEqual(['passengers[0].fare_class']);
  });

  it('needs one new id per added passenger', () => {
    expect(() =>
      planBookingChange(bookingState(), command({ addPassengers: [newcomer] }), [], farePrices),
    ).toThrow(DomainError);
  });
});
