// Reading which seat a seat-in-layout violation names, from PostgreSQL's detail line.
import { seatNamedByLayoutViolation } from '../../../src/db/seat-allocations';

describe('seatNamedByLayoutViolation', () => {
  it('reads the seat number from the key PostgreSQL reports', () => {
    expect(
      seatNamedByLayoutViolation({
        detail:
          'Key (layout_id, seat_number)=(4f1d2c3b-0000-4000-8000-000000000001, 9D) is not present in table "seats".',
      }),
    ).toBe('9D');
  });

  it('names no seat when the detail is missing or worded otherwise (a server with translated messages)', () => {
    expect(seatNamedByLayoutViolation({})).toBeUndefined();
    expect(
      seatNamedByLayoutViolation({
        detail: 'La clé (layout_id)=(x) n’est pas présente dans la table « seats ».',
      }),
    ).toBeUndefined();
  });
});
