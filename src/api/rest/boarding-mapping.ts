// The day of travel as the REST contract's JSON: a boarding, a trip's manifest page, and a scan's body.
import type { BoardingScan, BoardingView, ManifestEntry } from '../../application/boarding';

export function recordBoardingInput(body: unknown): BoardingScan {
  const { ticket, stop, device_id: deviceId } = (body ?? {}) as Record<string, unknown>;
  return { ticket, stop, ...(deviceId === undefined ? {} : { deviceId }) };
}

export function boardingJson(view: BoardingView) {
  return {
    booking_id: view.bookingId,
    passenger_id: view.passengerId,
    first_name: view.firstName,
    last_name: view.lastName,
    seat_number: view.seatNumber,
    stop: view.stop,
    boarded_at: view.boardedAt,
  };
}

export function manifestPassengerJson(entry: ManifestEntry) {
  return {
    passenger_id: entry.passengerId,
    booking_id: entry.bookingId,
    first_name: entry.firstName,
    last_name: entry.lastName,
    seat_number: entry.seatNumber,
    boarding_stop: entry.boardingStop,
    alighting_stop: entry.alightingStop,
    status: entry.status,
    boarded_at: entry.boardedAt ?? null,
    boarded_stop: entry.boardedStop ?? null,
  };
}
