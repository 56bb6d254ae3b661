// Seats against the bus layout (the seat must exist; the layout fixes its fare class), and how seat lists read.
import type { FareClass } from './booking';
import { validationFailed, type FieldViolation } from './errors';
import type { CreateBookingCommand, UpdateBookingCommand } from './validation';

/** Seat number → the fare class the layout gives that seat. */
export type SeatClasses = Readonly<Record<string, FareClass>>;

interface SeatClaim {
  readonly seatNumber: string;
  readonly fareClass: FareClass;
  /** Where the claim sits in the request, in the contract's snake_case names. */
  readonly field: string;
}

function assertSeatsOnBus(claims: readonly SeatClaim[], seatClasses: SeatClasses): void {
  const violations: FieldViolation[] = [];
  for (const claim of claims) {
    const layoutClass = Object.prototype.hasOwnProperty.call(seatClasses, claim.seatNumber)
      ? seatClasses[claim.seatNumber]
      : undefined;
    if (layoutClass === undefined) {
      violations.push({ field: claim.field, message: `seat ${claim.seatNumber} does not exist on this bus` });
    } else if (layoutClass !== claim.fareClass) {
      violations.push({
        field: claim.field,
        message: `seat ${claim.seatNumber} is a ${layoutClass} seat; choose fare class ${layoutClass} or another seat`,
      });
    }
  }
  if (violations.length > 0) throw validationFailed(violations);
}

export function assertCreateSeatsOnBus(command: CreateBookingCommand, seatClasses: SeatClasses): void {
  assertSeatsOnBus(
    command.passengers.flatMap((passenger, index) =>
      // An infant on a lap takes no seat of the bus.
      passenger.seatNumber === ''
        ? []
        : [
            {
              seatNumber: passenger.seatNumber,
              fareClass: passenger.fareClass,
              field: `passengers[${index}].seat_number`,
            },
          ],
    ),
    seatClasses,
  );
}

export function assertUpdateSeatsOnBus(command: UpdateBookingCommand, seatClasses: SeatClasses): void {
  assertSeatsOnBus(
    [
      ...command.seatChanges.map((change, index) => ({
        seatNumber: change.seatNumber,
        fareClass: change.fareClass,
        field: `seat_changes[${index}].seat_number`,
      })),
      ...command.addPassengers.map((passenger, index) => ({
        seatNumber: passenger.seatNumber,
        fareClass: passenger.fareClass,
        field: `add_passengers[${index}].seat_number`,
      })),
    ],
    seatClasses,
  );
}

/** Seat numbers as customers and operators read them, e.g. `4A, 4B`. */
export function seatNumberList(passengers: readonly { seatNumber: string }[]): string {
  return passengers.map((passenger) => passenger.seatNumber).join(', ');
}
