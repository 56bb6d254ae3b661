// A booking's price from its terms: the fare classes' prices, the passengers' types, and the discount code applied.
import type { FarePrices, PriceBreakdown } from './booking';
import { applyDiscount, type DiscountCode } from './discount-codes';
import { priceBooking } from './fares';
import { priceParty, type PassengerToPrice, type PassengerType } from './passenger-types';

/** What a discount code contributes to a price: its terms, copied into the booking when it is made. */
export type DiscountTerms = Pick<DiscountCode, 'code' | 'kind' | 'value' | 'currency'>;

/** How a booking is priced besides its fare prices; every part absent on bookings made before fares had them. */
export interface PriceTerms {
  /** The route's passenger types; without them every passenger pays the fare class's price. */
  readonly passengerTypes?: readonly PassengerType[];
  /** Legs of the booked segment, for per-segment prices (1 when absent). */
  readonly legCount?: number;
  readonly discount?: DiscountTerms;
}

/**
 * One line per passenger under the terms, the discount shared over them. The application prices a create with it
 * (to hold the client to the total it showed) and the workflow opens the booking with it, so both agree.
 */
export function priceWithTerms(
  passengers: readonly PassengerToPrice[],
  farePrices: FarePrices,
  terms: PriceTerms,
  fareClassField?: (index: number) => string,
): PriceBreakdown {
  const priced =
    terms.passengerTypes === undefined
      ? priceBooking(
          passengers.map((passenger) => ({ ...passenger, seatNumber: passenger.seatNumber ?? '' })),
          farePrices,
          fareClassField,
        )
      : priceParty(
          passengers,
          farePrices,
          { types: terms.passengerTypes, legCount: terms.legCount ?? 1 },
          fareClassField,
        );
  return terms.discount === undefined ? priced : applyDiscount(priced, terms.discount);
}
