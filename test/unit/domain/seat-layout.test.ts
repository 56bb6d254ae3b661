// Seats requested on create and update must exist on the bus and keep the layout's fare class; seat lists as read.
import { expect } from '@jest/globals';
import { findDomainError } from '../../../src/domain/errors';
import {
  assertCreateSeatsOnBus,
  assertUpdateSeatsOnBus,
  seatNumberList,
} from '../../../src/domain/seat-layout';

const seatClasses = { '1A': 'PREMIUM', '1B': 'PREMIUM', '2A': 'STANDARD', '2B': 'STANDARD' } as const;

const passenger = (seatNumber: string, fareClass: 'STANDARD' | 'PREMIUM') => ({
  firstName: 'Ana',
  lastName: 'Silva',
  email: 'ana@example.com',
  seatNumber,
  fareClass,
});

function violationsOf(check: () => void) {
  try {
    check();
    return [];
  } catch (error) {
    return findDomainError(error)?.fieldViolations ?? [];
  }
}

test('seats of the layout with their own fare class pass', () => {
  const command = {
    tripId: 't',
    contactEmail: 'ana@example.com',
    passengers: [passenger('1A', 'PREMIUM'), passenger('2B', 'STANDARD')],
  };
  expect(violationsOf(() => assertCreateSeatsOnBus(command, seatClasses))).toEqual([]);
});

test('a missing seat and a seat of another class are both reported, on their own fields', () => {
  const command = {
    tripId: 't',
    contactEmail: 'ana@example.com',
    passengers: [passenger('9F', 'STANDARD'), passenger('1B', 'STANDARD')],
  };
  expect(violationsOf(() => assertCreateSeatsOnBus(command, seatClasses))).toEqual([
    { field: 'passengers[0].seat_number', message: 'seat 9F does not exist on this bus' },
    {
      field: 'passengers[1].seat_number',
      message: 'seat 1B is a PREMIUM seat; choose fare class PREMIUM or another seat',
    },
  ]);
});

test('updates check seat changes and added passengers, and ignore inherited object keys', () => {
  const command = {
    seatChanges: [{ passengerId: 'p', seatNumber: '2A', fareClass: 'PREMIUM' as const }],
    addPassengers: [passenger('toString', 'STANDARD')],
    passengerUpdates: [],
  };
  expect(violationsOf(() => assertUpdateSeatsOnBus(command, seatClasses))).toEqual([
    { field: 'seat_changes[0].seat_number', message: expect.stringContaining('STANDARD seat') },
    { field: 'add_passengers[0].seat_number', message: 'seat toString does not exist on this bus' },
  ]);
});

test('seat lists read as the seat numbers in booking order, comma-separated', () => {
  expect(seatNumberList([{ seatNumber: '4B' }, { seatNumber: '4A' }])).toBe('4B, 4A');
  expect(seatNumberList([{ seatNumber: '12C' }])).toBe('12C');
});
