// The lifecycle message templates: every template renders, amounts and times are formatted, bad parameters are named.
import {
  bookingReference,
  formatInstant,
  formatMoney,
  NotificationTemplateError,
  notificationTemplateParameters,
  renderNotification,
} from '../../../src/activities/notification-templates';
import type { NotificationTemplate } from '../../../src/activities/interface';

const bookingId = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const departureTime = '2026-12-01T10:00:00.000Z';

describe('formatMoney', () => {
  it('uses the currency’s own number of decimals', () => {
    expect(formatMoney(2590, 'EUR')).toBe('€25.90');
    expect(formatMoney(0, 'EUR')).toBe('€0.00');
    expect(formatMoney(1500, 'JPY')).toBe('JP¥1,500');
    // ICU separates a code-style symbol with a no-break space.
    expect(formatMoney(12345, 'KWD')).toMatch(/^KWD\s12\.345$/);
    expect(formatMoney(123456789, 'GBP')).toBe('£1,234,567.89');
  });
});

describe('formatInstant', () => {
  it('shows the instant in the given time zone, UTC by default', () => {
    expect(formatInstant(departureTime)).toBe('Tue, 1 Dec 2026, 10:00 UTC');
    expect(formatInstant('2026-07-01T10:00:00Z', 'Europe/Lisbon')).toBe('Wed, 1 Jul 2026, 11:00 WEST');
  });
});

describe('renderNotification', () => {
  const reference = bookingReference(bookingId);

  it('confirms with departure, seats and the amount paid', () => {
    const message = renderNotification(
      'booking-confirmed',
      { departureTime, seatNumbers: '3A, 3B', amountPaidMinor: 5180, currency: 'EUR' },
      bookingId,
    );
    expect(reference).toBe('6F1C2A3B');
    expect(message.subject).toBe('Booking 6F1C2A3B confirmed');
    expect(message.text).toContain('Departure: Tue, 1 Dec 2026, 10:00 UTC\nSeats: 3A, 3B\nPaid: €51.80');
    expect(message.smsText).toBe(
      'Booking 6F1C2A3B confirmed: departure Tue, 1 Dec 2026, 10:00 UTC, seats 3A, 3B, paid €51.80.',
    );
  });

  it('describes a change with the difference charged or refunded', () => {
    const charged = renderNotification(
      'booking-changed',
      { departureTime, seatNumbers: '3A, 3B, 4A', totalMinor: 7770, currency: 'EUR', chargedMinor: 2590 },
      bookingId,
    );
    expect(charged.subject).toBe('Booking 6F1C2A3B changed');
    expect(charged.text).toContain('Total: €77.70\nCharged for the change: €25.90');
    expect(charged.text).not.toContain('Refunded');

    const refunded = renderNotification(
      'booking-changed',
      {
        departureTime,
        seatNumbers: '5C',
        totalMinor: 2590,
        currency: 'EUR',
        refundedMinor: 1410,
        chargedMinor: 0,
      },
      bookingId,
    );
    expect(refunded.text).toContain('Refunded for the change: €14.10');
    expect(refunded.text).not.toContain('Charged');
  });

  it('states the refund of a cancellation, or that none is due', () => {
    const withRefund = renderNotification(
      'booking-cancelled',
      { departureTime, refundAmountMinor: 2590, currency: 'EUR', reason: 'Plans changed' },
      bookingId,
    );
    expect(withRefund.subject).toBe('Booking 6F1C2A3B cancelled');
    expect(withRefund.text).toContain('Reason: Plans changed\nA refund of €25.90 is on its way');
    expect(withRefund.smsText).toBe('Booking 6F1C2A3B cancelled. Refund: €25.90.');

    const withoutRefund = renderNotification(
      'booking-cancelled',
      { departureTime, refundAmountMinor: 0, currency: 'EUR' },
      bookingId,
    );
    expect(withoutRefund.text).toContain('No refund is due');
    expect(withoutRefund.text).not.toContain('Reason:');
  });

  it('tells a passenger their trip was cancelled, why, and that everything paid comes back', () => {
    const cancelled = renderNotification(
      'trip-cancelled',
      { departureTime, refundAmountMinor: 2590, currency: 'EUR', reason: 'The bus broke down' },
      bookingId,
    );
    expect(cancelled.subject).toBe('Your trip was cancelled: booking 6F1C2A3B');
    expect(cancelled.text).toContain('Reason: The bus broke down');
    expect(cancelled.text).toContain('Everything you paid, €25.90, is being refunded');
    expect(cancelled.smsText).toContain('Refund: €25.90.');
    const unpaid = renderNotification(
      'trip-cancelled',
      { departureTime, refundAmountMinor: 0, currency: 'EUR', reason: 'The bus broke down' },
      bookingId,
    );
    expect(unpaid.text).toContain('Nothing was charged for this booking.');
  });

  it('tells the contact which passengers left the booking, who still travels and what comes back', () => {
    const one = renderNotification(
      'passengers-cancelled',
      {
        departureTime,
        passengerCount: 1,
        seatNumbers: '2A, 2B',
        refundAmountMinor: 1250,
        currency: 'EUR',
        reason: 'Ill',
      },
      bookingId,
    );
    expect(one.subject).toBe('Booking 6F1C2A3B: passengers cancelled');
    expect(one.text).toContain('One passenger was cancelled from booking 6F1C2A3B');
    expect(one.text).toContain('on seats 2A, 2B');
    expect(one.text).toContain('Reason: Ill\nA refund of €12.50 for them is on its way');
    expect(one.smsText).toContain('Refund: €12.50.');
    const two = renderNotification(
      'passengers-cancelled',
      { departureTime, passengerCount: 2, seatNumbers: '2A', refundAmountMinor: 0, currency: 'EUR' },
      bookingId,
    );
    expect(two.text).toContain('2 passengers were cancelled');
    expect(two.text).toContain('No refund is due for them');
  });

  it('explains an expiry', () => {
    const expired = renderNotification(
      'booking-expired',
      { departureTime, holdExpiresAt: '2026-11-01T09:15:00Z', timeZone: 'Europe/Lisbon' },
      bookingId,
    );
    expect(expired.subject).toBe('Booking 6F1C2A3B expired');
    expect(expired.text).toContain('expired at Sun, 1 Nov 2026, 09:15 WET before payment');
    expect(expired.text).toContain('Nothing was charged');
  });

  it('tells no-show passengers they missed the bus and what, if anything, comes back', () => {
    const nothingBack = renderNotification(
      'booking-no-show',
      { departureTime, seatNumbers: '3B', refundAmountMinor: 0, currency: 'EUR' },
      bookingId,
    );
    expect(nothingBack.subject).toBe('Booking 6F1C2A3B: missed departure');
    expect(nothingBack.text).toContain('without the passengers of seats 3B');
    expect(nothingBack.text).toContain('no refund is due for a missed departure');
    const halfBack = renderNotification(
      'booking-no-show',
      { departureTime, seatNumbers: '3B', refundAmountMinor: 1250, currency: 'EUR' },
      bookingId,
    );
    expect(halfBack.text).toContain('€12.50 is on its way back');
  });

  it('renders every template from its required parameters alone', () => {
    const samples: Record<string, string | number> = {
      departureTime,
      seatNumbers: '1A',
      amountPaidMinor: 100,
      totalMinor: 100,
      passengerCount: 1,
      refundAmountMinor: 100,
      currency: 'EUR',
      reason: 'The bus broke down',
    };
    for (const [template, { required }] of Object.entries(notificationTemplateParameters)) {
      const parameters = Object.fromEntries(required.map((name) => [name, samples[name]]));
      const message = renderNotification(template as NotificationTemplate, parameters, bookingId);
      expect(message.subject).toContain(reference);
      expect(message.text.length).toBeGreaterThan(message.smsText.length);
    }
  });

  it('names missing, unknown and malformed parameters', () => {
    const render = (parameters: Record<string, string | number>) => () =>
      renderNotification('booking-confirmed', parameters, bookingId);
    const complete = { departureTime, seatNumbers: '1A', amountPaidMinor: 100, currency: 'EUR' };
    expect(render({ currency: 'EUR' })).toThrow(
      new NotificationTemplateError(
        'template booking-confirmed needs parameters departureTime, seatNumbers, amountPaidMinor',
      ),
    );
    expect(render({ ...complete, passengerName: 'Ana' })).toThrow('has no parameters passengerName');
    expect(render({ ...complete, amountPaidMinor: 12.5 })).toThrow('amountPaidMinor must be a whole number');
    expect(render({ ...complete, currency: 'euro' })).toThrow('currency must be ISO 4217');
    expect(render({ ...complete, departureTime: 'tomorrow' })).toThrow(
      'departureTime must be an ISO 8601 instant',
    );
    expect(render({ ...complete, timeZone: 'Mars/Olympus' })).toThrow(
      'Mars/Olympus is not an IANA time zone',
    );
    expect(() => renderNotification('booking-lost' as NotificationTemplate, complete, bookingId)).toThrow(
      'unknown template booking-lost',
    );
  });
});
