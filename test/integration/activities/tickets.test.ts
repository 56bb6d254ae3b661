// IssueTickets: a confirmed booking's tickets signed and stored once, however often the activity runs; a seat change
// replaces one, a cancellation revokes them, a trip's revocations list them.
import { expect } from '@jest/globals';
import type { TicketActivities } from '../../../src/activities/interface';
import { createTicketActivities } from '../../../src/activities/tickets';
import { createReadModelActivities } from '../../../src/activities/read-model';
import { createSeatActivities } from '../../../src/activities/seats';
import { createTicketKeyStore } from '../../../src/db/ticket-keys';
import { readBookingTickets, readTripRevocations } from '../../../src/db/tickets';
import { activityKey } from '../../../src/domain/ids';
import { verifyTicket } from '../../../src/security/ticket-tokens';
import { bookingSnapshot, runActivity, testPassenger, useActivityTestBed } from '../../support/activities';

const testBed = useActivityTestBed();
let tickets: TicketActivities;

beforeAll(() => {
  tickets = createTicketActivities({
    database: testBed.database,
    ticketKeys: createTicketKeyStore({ database: testBed.database, cipher: testBed.cipher }),
  });
});

async function storedBooking(seatNumbers: string[]) {
  const passengers = seatNumbers.map((seatNumber) => testPassenger(seatNumber));
  const pending = bookingSnapshot(testBed.trip, passengers);
  const seats = createSeatActivities({
    database: testBed.database,
    cipher: testBed.cipher,
    lapsedHoldGraceSeconds: 60,
  });
  await runActivity(seats, 'ReserveSeats', {
    bookingId: pending.id,
    tripId: pending.tripId,
    seats: passengers.map((passenger) => ({
      passengerId: passenger.id,
      seatNumber: passenger.seatNumber,
      fareClass: passenger.fareClass,
    })),
    holdExpiresAt: pending.holdExpiresAt,
    idempotencyKey: activityKey(pending.id, 'reserve-seats', 1),
    booking: pending,
  });
  const confirmed = {
    ...pending,
    status: 'CONFIRMED' as const,
    version: 2,
    confirmedAt: new Date().toISOString(),
  };
  await runActivity(createReadModelActivities(testBed), 'RecordBooking', confirmed);
  return confirmed;
}

describe('IssueTickets', () => {
  it('issues one ticket per passenger of a confirmed booking, and a retry issues nothing more', async () => {
    const booking = await storedBooking(['2A', '2B']);
    await runActivity(tickets, 'IssueTickets', booking);
    const first = await readBookingTickets(testBed.database, booking.id);
    await runActivity(tickets, 'IssueTickets', booking);
    const second = await readBookingTickets(testBed.database, booking.id);
    expect(first).toHaveLength(2);
    expect(second.map((row) => [row.id, row.token])).toEqual(first.map((row) => [row.id, row.token]));
    expect(first.map((row) => row.seat).sort()).toEqual(['2A', '2B']);

    const keySet = await createTicketKeyStore({
      database: testBed.database,
      cipher: testBed.cipher,
    }).publicKeySet();
    const claims = await verifyTicket(first[0].token, keySet, { now: first[0].valid_from });
    expect(claims).toMatchObject({ bookingId: booking.id, tripId: booking.tripId, ticketId: first[0].id });
  });

  it('a seat change revokes only the moved passenger’s ticket; a cancellation revokes the rest', async () => {
    const booking = await storedBooking(['3A', '3B']);
    await runActivity(tickets, 'IssueTickets', booking);
    const [mover, stayer] = booking.passengers;
    const moved = {
      ...booking,
      version: 3,
      passengers: [{ ...mover, seatNumber: '3C' }, stayer],
    };
    await runActivity(tickets, 'IssueTickets', moved);
    const afterMove = await readBookingTickets(testBed.database, booking.id);
    expect(
      afterMove.map((row) => [
        row.passenger_id === mover.id ? 'mover' : 'stayer',
        row.seat,
        row.revoked_reason,
      ]),
    ).toEqual(
      expect.arrayContaining([
        ['mover', '3A', 'SEAT_CHANGED'],
        ['mover', '3C', null],
        ['stayer', '3B', null],
      ]),
    );
    expect(afterMove).toHaveLength(3);

    await runActivity(tickets, 'IssueTickets', { ...moved, status: 'CANCELLED', version: 4 });
    const afterCancel = await readBookingTickets(testBed.database, booking.id);
    expect(afterCancel.filter((row) => row.revoked_at === null)).toEqual([]);
    const revoked = await readTripRevocations(testBed.database, booking.tripId);
    expect(
      revoked.filter((revocation) => afterCancel.some((row) => row.id === revocation.ticketId)),
    ).toHaveLength(3);
  });
});
