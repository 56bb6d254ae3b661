// Within one API process, a burst for one seat starts one workflow, not one per request: the seats in flight.
import { seatUnavailable, type DomainError } from '../domain/errors';

export type SeatPassage =
  | {
      entered: true;
      /** Call once the create's seats are held or its create has ended; idempotent. */ leave(): void;
    }
  | {
      entered: false;
      /** The requested seats another booking's create is reserving, sorted. */ reservedByOthers: string[];
    };

export interface SeatsInFlight {
  /**
   * Marks the seats as being reserved by the booking, unless a create of another booking in this process is
   * reserving any of them on a leg of `legs` (the whole trip when absent). A create of the same booking (a retry)
   * enters alongside the first; creates of one seat on adjacent segments enter side by side.
   */
  enter(
    tripId: string,
    seatNumbers: readonly string[],
    bookingId: string,
    legs?: readonly number[],
  ): SeatPassage;
}

/** SEAT_UNAVAILABLE for seats another booking's create is reserving at this moment. */
export function seatsBeingReserved(seatNumbers: readonly string[]): DomainError {
  return seatUnavailable(
    seatNumbers,
    `another booking is reserving ${seatNumbers.length === 1 ? 'it' : 'them'}`,
  );
}

export function createSeatsInFlight(): SeatsInFlight {
  /** Per trip, seat and leg: the booking reserving it, and how many of its creates entered and have not left. */
  const reservations = new Map<string, { bookingId: string; creates: number }>();
  const keyOf = (tripId: string, seatNumber: string, leg: number | undefined) =>
    leg === undefined ? `${tripId}/${seatNumber}` : `${tripId}/${seatNumber}/${leg}`;

  function enter(
    tripId: string,
    seatNumbers: readonly string[],
    bookingId: string,
    legs?: readonly number[],
  ): SeatPassage {
    const seatKeys = seatNumbers.map((seatNumber) =>
      (legs ?? [undefined]).map((leg) => keyOf(tripId, seatNumber, leg)),
    );
    const keys = seatKeys.flat();
    const reservedByOthers = seatNumbers.filter((_, index) =>
      seatKeys[index].some((key) => {
        const reservation = reservations.get(key);
        return reservation !== undefined && reservation.bookingId !== bookingId;
      }),
    );
    if (reservedByOthers.length > 0) return { entered: false, reservedByOthers: reservedByOthers.sort() };
    for (const key of keys) {
      const reservation = reservations.get(key);
      if (reservation === undefined) reservations.set(key, { bookingId, creates: 1 });
      else reservation.creates += 1;
    }
    let left = false;
    return {
      entered: true,
      leave() {
        if (left) return;
        left = true;
        for (const key of keys) {
          const reservation = reservations.get(key);
          if (reservation === undefined) continue;
          reservation.creates -= 1;
          if (reservation.creates === 0) reservations.delete(key);
        }
      },
    };
  }

  return { enter };
}
