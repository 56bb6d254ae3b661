// Activity idempotency keys: derived from booking, step and revision only.
import { activityKey, activitySteps } from '../../../src/domain/ids';
import { bookingId } from '../../support/booking-states';

describe('activityKey', () => {
  it('is the same for the same booking, step and revision', () => {
    expect(activityKey(bookingId, 'reserve-seats', 1)).toBe(`${bookingId}:reserve-seats:1`);
    expect(activityKey(bookingId, 'reserve-seats', 1)).toBe(
      activityKey(bookingId.toUpperCase(), 'reserve-seats', 1),
    );
  });

  it('differs between steps and revisions', () => {
    const keys = activitySteps.flatMap((step) => [
      activityKey(bookingId, step, 1),
      activityKey(bookingId, step, 2),
      activityKey(bookingId, step, 'confirmed'),
    ]);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('refuses inputs that would make ambiguous keys', () => {
    expect(() => activityKey('booking-1', 'reserve-seats', 1)).toThrow(TypeError);
    expect(() => activityKey(bookingId, 'reserve-seats', -1)).toThrow(TypeError);
    expect(() => activityKey(bookingId, 'reserve-seats', 1.5)).toThrow(TypeError);
    expect(() => activityKey(bookingId, 'send-email', 'Confirmed:1')).toThrow(TypeError);
    expect(() => activityKey(bookingId, 'charge' as never, 1)).toThrow(TypeError);
  });

  it('takes revision 0 and any safe integer, but no unsafe integer', () => {
    expect(activityKey(bookingId, 'process-payment', 0)).toBe(`${bookingId}:process-payment:0`);
    expect(() => activityKey(bookingId, 'process-payment', 2 ** 60)).toThrow(TypeError);
  });

  it('takes a slug revision only when the whole revision is a lowercase slug', () => {
    expect(activityKey(bookingId, 'send-email', 'confirmed-2')).toBe(`${bookingId}:send-email:confirmed-2`);
    expect(() => activityKey(bookingId, 'send-email', 'confirmed:2')).toThrow(TypeError);
    expect(() => activityKey(bookingId, 'send-email', `c${'x'.repeat(63)}`)).toThrow(TypeError);
  });
});
