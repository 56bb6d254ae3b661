// The seats this API process's creates are reserving right now, so a burst for one seat starts one workflow, not many.

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
   * reserving any of them. A create of the same booking (a retry) enters alongside the first.
   */
  enter(tripId: string, seatNumbers: readonly string[], bookingId: string): SeatPassage;
}

interface Reservation {
  bookingId: string;
  /** Creates of this booking that entered and have not left. */
  creates: number;
}

export function createSeatsInFlight(): SeatsInFlight {
  const reservations = new Map<string, Reservation>();
  const keyOf = (tripId: string, seatNumber: string) => `${tripId}/${seatNumber}`;

  function enter(tripId: string, seatNumbers: readonly string[], bookingId: string): SeatPassage {
    const keys = seatNumbers.map((seatNumber) => keyOf(tripId, seatNumber));
    const reservedByOthers = seatNumbers.filter((_, index) => {
      const reservation = reservations.get(keys[index]);
      return reservation !== undefined && reservation.bookingId !== bookingId;
    });
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
