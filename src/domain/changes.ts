// Plans an accepted booking update: the new passenger list and price, which seats to hold and free, and the money to move.
import type { BookingState, FarePrices, Money, Passenger, PriceBreakdown, FareClass } from './booking';
import { DomainError } from './errors';
import { priceWithTerms, type PriceTerms } from './booking-price';
import { priceDelta, settlementForChange, type ChangeSettlement } from './fares';
import type { UpdateBookingCommand } from './validation';

export interface SeatRequest {
  readonly seatNumber: string;
  readonly fareClass: FareClass;
}

export interface BookingChangePlan {
  readonly passengers: readonly Passenger[];
  readonly price: PriceBreakdown;
  readonly priceDelta: Money;
  readonly settlement: ChangeSettlement;
  /** Reserve these first (the lifecycle: new seats before old ones are released). */
  readonly seatsToReserve: readonly SeatRequest[];
  /** Release these once the new seats are held. */
  readonly seatsToRelease: readonly string[];
}

/**
 * Applies a validated update to the booking. `newPassengerIds` name the added passengers in order; the
 * caller mints them (the workflow's deterministic uuid4) so this stays pure. The new price follows the booking's
 * terms: each passenger's type (`terms.passengerTypes`), and the discount code it was made with, applied afresh.
 */
export function planBookingChange(
  state: Pick<BookingState, 'status' | 'passengers' | 'price'>,
  command: UpdateBookingCommand,
  newPassengerIds: readonly string[],
  farePrices: FarePrices,
  terms: Omit<PriceTerms, 'discount'> = {},
): BookingChangePlan {
  if (newPassengerIds.length !== command.addPassengers.length) {
    throw new DomainError('INTERNAL', 'Every added passenger needs exactly one new id');
  }
  const seatChanges = new Map(command.seatChanges.map((change) => [change.passengerId, change]));
  const detailUpdates = new Map(command.passengerUpdates.map((update) => [update.passengerId, update]));

  const changedPassengers = state.passengers.map((passenger): Passenger => {
    const seatChange = seatChanges.get(passenger.id);
    const { passengerId: _passengerId, ...details } = detailUpdates.get(passenger.id) ?? { passengerId: '' };
    return {
      ...passenger,
      ...details,
      ...(seatChange === undefined
        ? {}
        : { seatNumber: seatChange.seatNumber, fareClass: seatChange.fareClass }),
    };
  });
  const addedPassengers = command.addPassengers.map((input, index): Passenger => ({
    id: newPassengerIds[index],
    ...input,
  }));
  const passengers = [...changedPassengers, ...addedPassengers];

  // An infant on a lap holds no seat.
  const seated = (list: readonly Passenger[]) => list.filter((passenger) => passenger.seatNumber !== '');
  const heldBefore = new Set(seated(state.passengers).map((passenger) => passenger.seatNumber));
  const heldAfter = new Set(seated(passengers).map((passenger) => passenger.seatNumber));
  const seatsToReserve = seated(passengers)
    .filter((passenger) => !heldBefore.has(passenger.seatNumber))
    .map((passenger) => ({ seatNumber: passenger.seatNumber, fareClass: passenger.fareClass }));
  const seatsToRelease = [...heldBefore].filter((seatNumber) => !heldAfter.has(seatNumber));

  // Point an unsold fare class at the request entry that asked for it.
  const seatChangeIndexes = new Map(command.seatChanges.map((change, index) => [change.passengerId, index]));
  const discount = state.price.discount;
  const priceTerms: PriceTerms = {
    ...terms,
    ...(discount === undefined
      ? {}
      : {
          discount: {
            code: discount.code,
            kind: discount.kind,
            value: discount.value,
            currency: discount.amount.currency,
          },
        }),
  };
  const price = priceWithTerms(passengers, farePrices, priceTerms, (index) => {
    const addedIndex = index - changedPassengers.length;
    if (addedIndex >= 0) return `add_passengers[${addedIndex}].fare_class`;
    const seatChangeIndex = seatChangeIndexes.get(passengers[index].id);
    return seatChangeIndex === undefined
      ? `passengers[${index}].fare_class`
      : `seat_changes[${seatChangeIndex}].fare_class`;
  });
  const delta = priceDelta(state.price, price);
  return {
    passengers,
    price,
    priceDelta: delta,
    settlement: settlementForChange(state.status, delta),
    seatsToReserve,
    seatsToRelease,
  };
}
