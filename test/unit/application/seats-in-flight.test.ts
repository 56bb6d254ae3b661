// The seats a process's creates are reserving: one booking per seat at a time, its own retries alongside it.
import { createSeatsInFlight } from '../../../src/application/seats-in-flight';

const trip = 'trip-1';

test('a seat another booking is reserving is refused, naming only the seats in question, sorted', () => {
  const seats = createSeatsInFlight();
  expect(seats.enter(trip, ['3A'], 'booking-1').entered).toBe(true);
  expect(seats.enter(trip, ['4B', '3A', '2C'], 'booking-2')).toEqual({
    entered: false,
    reservedByOthers: ['3A'],
  });
  // Nothing of a refused create stays marked: its other seats are free for a third booking.
  expect(seats.enter(trip, ['4B', '2C'], 'booking-3').entered).toBe(true);
});

test('the same seat on another trip is another seat', () => {
  const seats = createSeatsInFlight();
  expect(seats.enter(trip, ['3A'], 'booking-1').entered).toBe(true);
  expect(seats.enter('trip-2', ['3A'], 'booking-2').entered).toBe(true);
});

test('a retry of the same booking enters alongside it, and the seat is free once both have left', () => {
  const seats = createSeatsInFlight();
  const first = seats.enter(trip, ['3A'], 'booking-1');
  const retry = seats.enter(trip, ['3A'], 'booking-1');
  if (!first.entered || !retry.entered) throw new Error('both creates of booking-1 should have entered');
  first.leave();
  first.leave();
  expect(seats.enter(trip, ['3A'], 'booking-2').entered).toBe(false);
  retry.leave();
  expect(seats.enter(trip, ['3A'], 'booking-2').entered).toBe(true);
});
