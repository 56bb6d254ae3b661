// Day-of-travel rules: who may board where, when a passenger who did not board becomes a no-show, each one's status.
import type { Boarding, BookingState, Passenger, Timestamp } from './booking';
import { bookingStateConflict, DomainError, validationFailed } from './errors';
import { addDuration, timestampMs } from './time';

/** Where a passenger stands on the day of travel, as the manifest shows it. */
export const boardingStatuses = ['EXPECTED', 'BOARDED', 'NO_SHOW', 'CANCELLED'] as const;
export type BoardingStatus = (typeof boardingStatuses)[number];

/** A boarding as the scanner asks for it; the workflow checks it against the booking. */
export interface BoardingRequest {
  readonly passengerId: string;
  readonly stopCode: string;
  readonly boardedAt: Timestamp;
  readonly actorId: string;
  readonly deviceId?: string;
}

/** The booking's day-of-travel record, kept in its state beside the lifecycle status. */
export type BoardingRecord = Pick<BookingState, 'status' | 'passengers' | 'boardings' | 'noShowsRecordedAt'>;

export function alreadyBoarded(
  boarding: Pick<Boarding, 'passengerId' | 'boardedAt' | 'stopCode'>,
): DomainError {
  return new DomainError(
    'ALREADY_BOARDED',
    `The passenger already boarded at ${boarding.stopCode} at ${boarding.boardedAt}`,
    {
      details: { passengerId: boarding.passengerId, boardedAt: boarding.boardedAt, stop: boarding.stopCode },
    },
  );
}

export function boardingOf(record: BoardingRecord, passengerId: string): Boarding | undefined {
  return (record.boardings ?? []).find((boarding) => boarding.passengerId === passengerId);
}

/**
 * A passenger boards a CONFIRMED booking, once, at the booking's boarding stop, until the no-shows are recorded.
 * `boardingStopCode` is the booking's boarding stop where the workflow knows it (bookings made before segments
 * leave that check to the caller, which knows the route's origin).
 */
export function assertCanBoard(
  record: BoardingRecord,
  request: Pick<BoardingRequest, 'passengerId' | 'stopCode'>,
  boardingStopCode: string | undefined,
): void {
  const earlier = boardingOf(record, request.passengerId);
  if (earlier !== undefined) throw alreadyBoarded(earlier);
  if (record.status !== 'CONFIRMED') {
    const reason = record.status === 'CANCELLED' ? 'the booking was cancelled' : undefined;
    throw bookingStateConflict(record.status, 'board', reason);
  }
  if (!record.passengers.some((passenger) => passenger.id === request.passengerId)) {
    throw bookingStateConflict(record.status, 'board', 'the passenger is no longer on the booking');
  }
  if (record.noShowsRecordedAt !== undefined) {
    throw bookingStateConflict(
      record.status,
      'board',
      `the passenger was recorded as a no-show at ${record.noShowsRecordedAt}`,
    );
  }
  if (boardingStopCode !== undefined && request.stopCode !== boardingStopCode) {
    throw validationFailed([
      { field: 'stop', message: `the passenger boards at ${boardingStopCode}, not at ${request.stopCode}` },
    ]);
  }
}

/** The booking's state once the passenger has boarded. */
export function withBoarding<State extends BoardingRecord>(state: State, request: BoardingRequest): State {
  const boarding: Boarding = {
    passengerId: request.passengerId,
    boardedAt: request.boardedAt,
    stopCode: request.stopCode,
    actorId: request.actorId,
    ...(request.deviceId === undefined ? {} : { deviceId: request.deviceId }),
  };
  return { ...state, boardings: [...(state.boardings ?? []), boarding] };
}

/**
 * When passengers not aboard become no-shows: the departure from the boarding stop plus the grace period, or the
 * arrival at the alighting stop if that comes first (a short segment ends before the grace does).
 */
export function noShowDeadline(
  departureTime: Timestamp,
  graceMs: number,
  arrivalTime?: Timestamp,
): Timestamp {
  const graceEnds = addDuration(new Date(timestampMs(departureTime)), graceMs);
  if (arrivalTime === undefined) return graceEnds;
  return timestampMs(arrivalTime) < timestampMs(graceEnds)
    ? new Date(timestampMs(arrivalTime)).toISOString()
    : graceEnds;
}

/** Passengers of the booking who had not boarded when the no-shows were recorded (or by now, before that). */
export function passengersNotBoarded(record: BoardingRecord): Passenger[] {
  return record.passengers.filter((passenger) => boardingOf(record, passenger.id) === undefined);
}

/** Each passenger's day-of-travel status: cancelled bookings' passengers are cancelled whatever they did. */
export function passengerBoardingStatus(record: BoardingRecord, passengerId: string): BoardingStatus {
  if (record.status === 'CANCELLED' || record.status === 'EXPIRED') return 'CANCELLED';
  if (boardingOf(record, passengerId) !== undefined) return 'BOARDED';
  return record.noShowsRecordedAt === undefined ? 'EXPECTED' : 'NO_SHOW';
}
