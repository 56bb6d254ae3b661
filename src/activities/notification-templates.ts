// The customer messages of the booking lifecycle: subject, email text and SMS text from a template's parameters.
import type { NotificationTemplate } from './interface';

/**
 * Parameters each template reads (amounts in minor units of `currency`, instants as ISO 8601).
 * Every template also accepts `timeZone` (IANA, default UTC) for the times it shows.
 */
export const notificationTemplateParameters: Readonly<
  Record<NotificationTemplate, { required: readonly string[]; optional: readonly string[] }>
> = {
  'booking-confirmed': {
    required: ['departureTime', 'seatNumbers', 'amountPaidMinor', 'currency'],
    optional: [],
  },
  'booking-changed': {
    required: ['departureTime', 'seatNumbers', 'totalMinor', 'currency'],
    optional: ['chargedMinor', 'refundedMinor'],
  },
  'booking-cancelled': { required: ['departureTime', 'refundAmountMinor', 'currency'], optional: ['reason'] },
  'booking-expired': {
    required: ['departureTime'],
    optional: ['holdExpiresAt', 'refundAmountMinor', 'currency'],
  },
  'booking-no-show': {
    required: ['departureTime', 'seatNumbers', 'refundAmountMinor', 'currency'],
    optional: [],
  },
  'passengers-cancelled': {
    required: ['departureTime', 'passengerCount', 'seatNumbers', 'refundAmountMinor', 'currency'],
    optional: ['reason'],
  },
  'trip-cancelled': { required: ['departureTime', 'refundAmountMinor', 'currency', 'reason'], optional: [] },
};

export interface RenderedNotification {
  subject: string;
  /** Plain-text email body. */
  text: string;
  /** One short line for SMS. */
  smsText: string;
}

export class NotificationTemplateError extends Error {
  override name = 'NotificationTemplateError';
}

type Parameters = Readonly<Record<string, string | number>>;

/** Formats integer minor units with the currency's own number of decimals, e.g. 2590 EUR → €25.90. */
export function formatMoney(amountMinor: number, currency: string): string {
  const format = new Intl.NumberFormat('en-GB', { style: 'currency', currency });
  const decimals = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amountMinor / 10 ** decimals);
}

/** e.g. `Tue, 1 Dec 2026, 10:00 UTC`. */
export function formatInstant(instant: string, timeZone = 'UTC'): string {
  return new Intl.DateTimeFormat('en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone,
    timeZoneName: 'short',
  }).format(new Date(instant));
}

/** The short reference customers quote to support: the first block of the booking id. */
export function bookingReference(bookingId: string): string {
  return bookingId.slice(0, 8).toUpperCase();
}

function readers(template: NotificationTemplate, parameters: Parameters) {
  const { required, optional } = notificationTemplateParameters[template];
  const missing = required.filter((name) => parameters[name] === undefined || parameters[name] === '');
  if (missing.length > 0) {
    throw new NotificationTemplateError(`template ${template} needs parameters ${missing.join(', ')}`);
  }
  const known = new Set([...required, ...optional, 'timeZone']);
  const unknown = Object.keys(parameters).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new NotificationTemplateError(`template ${template} has no parameters ${unknown.join(', ')}`);
  }
  const timeZone = parameters.timeZone === undefined ? 'UTC' : String(parameters.timeZone);
  const text = (name: string) => String(parameters[name]);
  const optionalText = (name: string) => (parameters[name] === undefined ? undefined : text(name));
  const minor = (name: string) => {
    const value = Number(parameters[name]);
    if (!Number.isSafeInteger(value)) {
      throw new NotificationTemplateError(`parameter ${name} must be a whole number of minor units`);
    }
    return value;
  };
  const currency = () => {
    const value = text('currency');
    if (!/^[A-Z]{3}$/.test(value)) throw new NotificationTemplateError('parameter currency must be ISO 4217');
    return value;
  };
  const amount = (name: string) => formatMoney(minor(name), currency());
  const instant = (name: string) => {
    const value = text(name);
    if (Number.isNaN(Date.parse(value))) {
      throw new NotificationTemplateError(`parameter ${name} must be an ISO 8601 instant`);
    }
    try {
      return formatInstant(value, timeZone);
    } catch {
      throw new NotificationTemplateError(`parameter timeZone ${timeZone} is not an IANA time zone`);
    }
  };
  return {
    text,
    optionalText,
    minor,
    amount,
    instant,
    has: (name: string) => parameters[name] !== undefined,
  };
}

const signature = '\n\nThank you for travelling with us.\nBus Bookings';

export function renderNotification(
  template: NotificationTemplate,
  parameters: Parameters,
  bookingId: string,
): RenderedNotification {
  if (!(template in notificationTemplateParameters)) {
    throw new NotificationTemplateError(`unknown template ${String(template)}`);
  }
  const read = readers(template, parameters);
  const reference = bookingReference(bookingId);

  switch (template) {
    case 'booking-confirmed': {
      const departure = read.instant('departureTime');
      const paid = read.amount('amountPaidMinor');
      return {
        subject: `Booking ${reference} confirmed`,
        text:
          `Your booking ${reference} is confirmed.\n\n` +
          `Departure: ${departure}\nSeats: ${read.text('seatNumbers')}\nPaid: ${paid}` +
          signature,
        smsText: `Booking ${reference} confirmed: departure ${departure}, seats ${read.text('seatNumbers')}, paid ${paid}.`,
      };
    }
    case 'booking-changed': {
      const departure = read.instant('departureTime');
      const total = read.amount('totalMinor');
      const settlement = [
        read.has('chargedMinor') && read.minor('chargedMinor') > 0
          ? `Charged for the change: ${read.amount('chargedMinor')}`
          : undefined,
        read.has('refundedMinor') && read.minor('refundedMinor') > 0
          ? `Refunded for the change: ${read.amount('refundedMinor')}`
          : undefined,
      ].filter((line): line is string => line !== undefined);
      return {
        subject: `Booking ${reference} changed`,
        text:
          `Your booking ${reference} has been changed.\n\n` +
          `Departure: ${departure}\nSeats: ${read.text('seatNumbers')}\nTotal: ${total}` +
          settlement.map((line) => `\n${line}`).join('') +
          signature,
        smsText: `Booking ${reference} changed: seats ${read.text('seatNumbers')}, total ${total}.`,
      };
    }
    case 'booking-cancelled': {
      const departure = read.instant('departureTime');
      const refundMinor = read.minor('refundAmountMinor');
      const refund = read.amount('refundAmountMinor');
      const refundLine =
        refundMinor > 0
          ? `A refund of ${refund} is on its way to your original payment method.`
          : 'No refund is due under the fare rules of this booking.';
      const reason = read.optionalText('reason');
      return {
        subject: `Booking ${reference} cancelled`,
        text:
          `Your booking ${reference} for the departure of ${departure} has been cancelled.\n\n` +
          (reason === undefined ? '' : `Reason: ${reason}\n`) +
          `${refundLine}` +
          signature,
        smsText: `Booking ${reference} cancelled. Refund: ${refund}.`,
      };
    }
    case 'trip-cancelled': {
      const departure = read.instant('departureTime');
      const refundMinor = read.minor('refundAmountMinor');
      const refund = read.amount('refundAmountMinor');
      const refundLine =
        refundMinor > 0
          ? `Everything you paid, ${refund}, is being refunded to your original payment method.`
          : 'Nothing was charged for this booking.';
      return {
        subject: `Your trip was cancelled: booking ${reference}`,
        text:
          `We are sorry: the bus departing ${departure} was cancelled by the operator, and your booking ` +
          `${reference} with it.\n\nReason: ${read.text('reason')}\n${refundLine}` +
          signature,
        smsText: `Your bus departing ${departure} was cancelled; booking ${reference} is cancelled. Refund: ${refund}.`,
      };
    }
    case 'booking-expired': {
      const departure = read.instant('departureTime');
      const expiredAt = read.has('holdExpiresAt') ? ` at ${read.instant('holdExpiresAt')}` : '';
      // A payment that arrived after the seats went back is refunded in full, and the customer must hear so.
      const refunded = read.has('refundAmountMinor') ? read.amount('refundAmountMinor') : undefined;
      const moneyLine =
        refunded === undefined
          ? 'Nothing was charged.'
          : `Your payment arrived after the hold ended and the seats were gone, so ${refunded} is on its way back to your original payment method.`;
      return {
        subject: `Booking ${reference} expired`,
        text:
          `Your seat hold for booking ${reference} (departure ${departure}) expired${expiredAt} before payment, ` +
          `so the seats have been released. ${moneyLine} You are welcome to book again.` +
          signature,
        smsText:
          refunded === undefined
            ? `Booking ${reference} expired before payment; the seats were released and nothing was charged.`
            : `Booking ${reference} expired before your payment arrived; ${refunded} is being refunded in full.`,
      };
    }
    case 'passengers-cancelled': {
      const departure = read.instant('departureTime');
      const count = read.minor('passengerCount');
      const who = count === 1 ? 'One passenger was' : `${count} passengers were`;
      const refund = read.amount('refundAmountMinor');
      const refundLine =
        read.minor('refundAmountMinor') > 0
          ? `A refund of ${refund} for them is on its way to your original payment method.`
          : 'No refund is due for them under the fare rules of this booking.';
      const reason = read.optionalText('reason');
      return {
        subject: `Booking ${reference}: passengers cancelled`,
        text:
          `${who} cancelled from booking ${reference} for the departure of ${departure}; their seats were ` +
          `released and their tickets are no longer valid. Everyone else travels as booked, on seats ` +
          `${read.text('seatNumbers')}.\n\n` +
          (reason === undefined ? '' : `Reason: ${reason}\n`) +
          refundLine +
          signature,
        smsText: `Booking ${reference}: ${count} passenger(s) cancelled, the others travel on seats ${read.text('seatNumbers')}. Refund: ${refund}.`,
      };
    }
    case 'booking-no-show': {
      const departure = read.instant('departureTime');
      const seats = read.text('seatNumbers');
      const refund = read.amount('refundAmountMinor');
      const refundLine =
        read.minor('refundAmountMinor') > 0
          ? `Under the fare rules of this booking, ${refund} is on its way back to your original payment method.`
          : 'Under the fare rules of this booking, no refund is due for a missed departure.';
      return {
        subject: `Booking ${reference}: missed departure`,
        text:
          `The bus of booking ${reference} left at ${departure} without the passengers of seats ${seats}, ` +
          `who had not boarded by the end of boarding; they are recorded as no-shows.\n\n${refundLine}` +
          signature,
        smsText: `Booking ${reference}: seats ${seats} did not board the departure of ${departure} (no-show). Refund: ${refund}.`,
      };
    }
  }
}
