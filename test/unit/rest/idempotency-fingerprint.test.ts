// What makes two requests "the same" for an Idempotency-Key: operation, path parameters and body, key order aside.
import { requestFingerprint } from '../../../src/application/admission';

const bookingId = '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e';

describe('requestFingerprint', () => {
  it('ignores the order of object keys at every depth', () => {
    const first = requestFingerprint('createBooking', {}, { a: 1, b: { c: [1, 2], d: 'x' } });
    const second = requestFingerprint('createBooking', {}, { b: { d: 'x', c: [1, 2] }, a: 1 });
    expect(first).toBe(second);
  });

  it('tells apart bodies, array orders, path parameters and operations', () => {
    const base = requestFingerprint(
      'confirmPayment',
      { booking_id: bookingId },
      { payment_token: 'tok_visa' },
    );
    expect(
      requestFingerprint('confirmPayment', { booking_id: bookingId }, { payment_token: 'tok_other' }),
    ).not.toBe(base);
    expect(
      requestFingerprint(
        'confirmPayment',
        { booking_id: bookingId.replace('7', '8') },
        { payment_token: 'tok_visa' },
      ),
    ).not.toBe(base);
    expect(
      requestFingerprint('createBooking', { booking_id: bookingId }, { payment_token: 'tok_visa' }),
    ).not.toBe(base);
    expect(requestFingerprint('x', {}, { list: [1, 2] })).not.toBe(
      requestFingerprint('x', {}, { list: [2, 1] }),
    );
  });

  it('treats an absent body and an empty one as different requests', () => {
    expect(requestFingerprint('cancelBooking', {}, undefined)).not.toBe(
      requestFingerprint('cancelBooking', {}, {}),
    );
  });
});
