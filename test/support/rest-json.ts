// The proto Booking rewritten in the REST contract's JSON terms, to compare the two fronts field for field.
import { BookingStatus, PaymentStatus } from '../../src/generated/com/example/bookings/v1/booking';

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/**
 * The proto message in the REST JSON's terms: snake_case names, RFC 3339 strings for Timestamps, enum names
 * without their prefix, and null for what proto3 leaves empty or unset (it has no presence for plain strings).
 */
export function asRestJson(value: unknown, path = ''): unknown {
  if (value === undefined || value === '') return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => asRestJson(item, path));
  if (path === 'status') return BookingStatus[value as BookingStatus].replace(/^BOOKING_STATUS_/, '');
  if (path === 'payment.status') return PaymentStatus[value as PaymentStatus].replace(/^PAYMENT_STATUS_/, '');
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [
        snakeCase(name),
        asRestJson(item, path ? `${path}.${name}` : name),
      ]),
    );
  }
  return value;
}
