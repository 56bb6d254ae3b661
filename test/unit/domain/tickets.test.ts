// Ticket rules: the validity window, and which tickets a booking's state issues and revokes.
import {
  planTicketChanges,
  ticketIdName,
  ticketValidity,
  type IssuedTicket,
  type TicketPlace,
} from '../../../src/domain/tickets';

const place = (passengerId: string, seatNumber: string, stops = ['LIS', 'POR']): TicketPlace => ({
  passengerId,
  tripId: 'trip-1',
  seatNumber,
  boardingStopCode: stops[0],
  alightingStopCode: stops[1],
});
const issued = (ticketId: string, of: TicketPlace, revokedAt?: string): IssuedTicket => ({
  ticketId,
  ...of,
  ...(revokedAt === undefined ? {} : { revokedAt }),
});

describe('ticketValidity', () => {
  it('opens three hours before the departure from the boarding stop and ends at the arrival', () => {
    expect(ticketValidity('2026-12-01T10:00:00.000Z', '2026-12-01T13:30:00.000Z')).toEqual({
      validFrom: '2026-12-01T07:00:00.000Z',
      validUntil: '2026-12-01T13:30:00.000Z',
    });
  });
});

describe('planTicketChanges', () => {
  it('issues one ticket per passenger of a newly confirmed booking', () => {
    const places = [place('p1', '1A'), place('p2', '1B')];
    expect(planTicketChanges('CONFIRMED', places, [])).toEqual({ issue: places, revoke: [] });
  });

  it('keeps a valid ticket that still matches, so a repeat issues nothing', () => {
    const places = [place('p1', '1A')];
    expect(planTicketChanges('CONFIRMED', places, [issued('t1', places[0])])).toEqual({
      issue: [],
      revoke: [],
    });
  });

  it('a seat change revokes the old ticket and issues one for the new seat', () => {
    const changes = planTicketChanges('CONFIRMED', [place('p1', '2C')], [issued('t1', place('p1', '1A'))]);
    expect(changes).toEqual({
      issue: [place('p1', '2C')],
      revoke: [{ ticketId: 't1', reason: 'SEAT_CHANGED' }],
    });
  });

  it('a segment change revokes with SEGMENT_CHANGED', () => {
    const changes = planTicketChanges(
      'CONFIRMED',
      [place('p1', '1A', ['LIS', 'COI'])],
      [issued('t1', place('p1', '1A'))],
    );
    expect(changes.revoke).toEqual([{ ticketId: 't1', reason: 'SEGMENT_CHANGED' }]);
    expect(changes.issue).toEqual([place('p1', '1A', ['LIS', 'COI'])]);
  });

  it('an added passenger gets a ticket, the others keep theirs', () => {
    const changes = planTicketChanges(
      'CONFIRMED',
      [place('p1', '1A'), place('p2', '1B')],
      [issued('t1', place('p1', '1A'))],
    );
    expect(changes).toEqual({ issue: [place('p2', '1B')], revoke: [] });
  });

  it('a passenger no longer on the booking loses the ticket', () => {
    const changes = planTicketChanges(
      'CONFIRMED',
      [place('p1', '1A')],
      [issued('t1', place('p1', '1A')), issued('t2', place('p2', '1B'))],
    );
    expect(changes.revoke).toEqual([{ ticketId: 't2', reason: 'PASSENGER_REMOVED' }]);
  });

  it.each([
    ['CANCELLED', 'BOOKING_CANCELLED'],
    ['EXPIRED', 'BOOKING_EXPIRED'],
  ] as const)('a %s booking revokes every valid ticket (%s)', (status, reason) => {
    const changes = planTicketChanges(
      status,
      [place('p1', '1A')],
      [issued('t1', place('p1', '1A')), issued('t0', place('p1', '3D'), '2026-11-01T00:00:00.000Z')],
    );
    expect(changes).toEqual({ issue: [], revoke: [{ ticketId: 't1', reason }] });
  });

  it('a completed or pending booking changes no ticket', () => {
    const existing = [issued('t1', place('p1', '1A'))];
    expect(planTicketChanges('COMPLETED', [place('p1', '2A')], existing)).toEqual({ issue: [], revoke: [] });
    expect(planTicketChanges('PENDING_PAYMENT', [place('p1', '1A')], [])).toEqual({ issue: [], revoke: [] });
  });
});

describe('ticketIdName', () => {
  it('names a ticket by booking, passenger and booking version', () => {
    expect(ticketIdName('b', 'p', 3)).toBe('ticket:b:p:3');
    expect(ticketIdName('b', 'p', 4)).not.toBe(ticketIdName('b', 'p', 3));
  });
});
