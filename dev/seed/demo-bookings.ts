// Demo bookings for part of a trip, so seeded seat maps differ by segment; `npm start` makes them through the API.

export interface DemoBooking {
  routeCode: string;
  /** Local wall-clock departure at the route's origin, HH:MM: one of the route's `departureTimes`. */
  departureTime: string;
  boardingStopCode: string;
  alightingStopCode: string;
  seatNumber: string;
  passenger: { firstName: string; lastName: string };
}

/**
 * The demo bookings are on the trips this many days after the start's date: far enough ahead that their
 * departures stay open for changes for days, and past the few days the client walk-throughs pick free seats from.
 */
export const DEMO_BOOKING_DAYS_AHEAD = 7;

/**
 * Morning departures, so every stop of each segment is reached on the day the trip leaves. Seat 3A of the Amsterdam
 * to Berlin coach is taken to Hanover only and 3B from Hanover on; seat 5C of the Brussels to Berlin coach is sold
 * twice, on two segments that share no leg.
 */
export const demoBookings: readonly DemoBooking[] = [
  {
    routeCode: 'AMS-BER',
    departureTime: '07:00',
    boardingStopCode: 'AMS',
    alightingStopCode: 'HAJ',
    seatNumber: '3A',
    passenger: { firstName: 'Alice', lastName: 'Martins' },
  },
  {
    routeCode: 'AMS-BER',
    departureTime: '07:00',
    boardingStopCode: 'HAJ',
    alightingStopCode: 'BER',
    seatNumber: '3B',
    passenger: { firstName: 'Jonas', lastName: 'Becker' },
  },
  {
    routeCode: 'BRU-BER',
    departureTime: '06:00',
    boardingStopCode: 'BRU',
    alightingStopCode: 'RTM',
    seatNumber: '5C',
    passenger: { firstName: 'Alice', lastName: 'Martins' },
  },
  {
    routeCode: 'BRU-BER',
    departureTime: '06:00',
    boardingStopCode: 'AMS',
    alightingStopCode: 'BER',
    seatNumber: '5C',
    passenger: { firstName: 'Sofie', lastName: 'Jansen' },
  },
  {
    routeCode: 'LIS-POR',
    departureTime: '08:00',
    boardingStopCode: 'COI',
    alightingStopCode: 'POR',
    seatNumber: '2D',
    passenger: { firstName: 'Alice', lastName: 'Martins' },
  },
];
