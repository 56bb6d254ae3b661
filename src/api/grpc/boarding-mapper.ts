// The day of travel as gRPC messages: a boarding and a trip's manifest passengers.
import type { BoardingView, ManifestEntry } from '../../application/boarding';
import type { BoardingStatus } from '../../domain/boarding';
import {
  BoardingStatus as BoardingStatusMessage,
  type Boarding,
  type ManifestPassenger,
} from '../../generated/com/example/bookings/v1/boarding';

const boardingStatusMessages: Readonly<Record<BoardingStatus, BoardingStatusMessage>> = {
  EXPECTED: BoardingStatusMessage.BOARDING_STATUS_EXPECTED,
  BOARDED: BoardingStatusMessage.BOARDING_STATUS_BOARDED,
  NO_SHOW: BoardingStatusMessage.BOARDING_STATUS_NO_SHOW,
  CANCELLED: BoardingStatusMessage.BOARDING_STATUS_CANCELLED,
};

export function toBoardingMessage(view: BoardingView): Boarding {
  return {
    bookingId: view.bookingId,
    passengerId: view.passengerId,
    firstName: view.firstName,
    lastName: view.lastName,
    seatNumber: view.seatNumber,
    stop: view.stop,
    boardedAt: new Date(view.boardedAt),
  };
}

export function toManifestPassengerMessage(entry: ManifestEntry): ManifestPassenger {
  return {
    passengerId: entry.passengerId,
    bookingId: entry.bookingId,
    firstName: entry.firstName,
    lastName: entry.lastName,
    seatNumber: entry.seatNumber,
    boardingStop: entry.boardingStop,
    alightingStop: entry.alightingStop,
    status: boardingStatusMessages[entry.status],
    boardedAt: entry.boardedAt === undefined ? undefined : new Date(entry.boardedAt),
    boardedStop: entry.boardedStop ?? '',
  };
}
