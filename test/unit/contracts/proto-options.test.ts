// Unit tests: authorization, HTTP-binding and sensitive-field options are read from the contracts' descriptor set.
import { expect } from '@jest/globals';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  bookingServiceAuthorization,
  contractFiles,
  grpcPathAuthorization,
  grpcPathHttpBindings,
  sensitiveFieldNames,
  sensitiveFields,
  sensitivePropertyNames,
} from '../../../src/contracts/proto-options';
import { BookingServiceService } from '../../../src/generated/com/example/bookings/v1/booking_service';

const everyRole = ['customer', 'agent', 'admin'];

function protoFilesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.proto'))
    .map((file) => path.join(directory, file));
}

describe('BookingService authorization options', () => {
  it('has a policy for every RPC of the generated service definition', () => {
    expect([...bookingServiceAuthorization.keys()].sort()).toEqual([
      'CancelBooking',
      'CancelPassengers',
      'CancelTrip',
      'ConfirmPayment',
      'CreateBooking',
      'GetBooking',
      'GetRefundQuote',
      'GetTicketPdf',
      'GetTripCancellation',
      'GetTripManifest',
      'ListBookings',
      'ListTickets',
      'ListTripTicketRevocations',
      'QuoteRefund',
      'RecordBoarding',
      'UpdateBooking',
    ]);
    for (const method of Object.values(BookingServiceService)) {
      expect(grpcPathAuthorization.get(method.path)).toBeDefined();
    }
  });

  it.each([
    ['CreateBooking', 'bookings:write'],
    ['UpdateBooking', 'bookings:write'],
    ['CancelBooking', 'bookings:write'],
    ['CancelPassengers', 'bookings:write'],
    ['GetBooking', 'bookings:read'],
    ['ListBookings', 'bookings:read'],
    ['ConfirmPayment', 'payments:write'],
    ['ListTickets', 'bookings:read'],
    ['GetTicketPdf', 'bookings:read'],
    ['QuoteRefund', 'bookings:read'],
    ['GetRefundQuote', 'bookings:read'],
  ] as const)('%s requires %s from a customer, agent or admin user', (methodName, scope) => {
    expect(bookingServiceAuthorization.get(methodName)).toEqual({
      scopes: [scope],
      roles: everyRole,
      allowServiceOnly: false,
    });
  });

  it('lets drivers, agents and admins sync a trip’s revoked tickets with trips:read', () => {
    expect(bookingServiceAuthorization.get('ListTripTicketRevocations')).toEqual({
      scopes: ['trips:read'],
      roles: ['driver', 'agent', 'admin'],
      allowServiceOnly: false,
    });
  });

  it('is the same policy under the full gRPC path', () => {
    expect(grpcPathAuthorization.get('/com.example.bookings.v1.BookingService/CreateBooking')).toBe(
      bookingServiceAuthorization.get('CreateBooking'),
    );
  });

  it('lets internal services call the seat, payment and notification contracts without a user token', () => {
    expect(grpcPathAuthorization.get('/com.example.seats.v1.SeatReservationService/ReserveSeats')).toEqual({
      scopes: ['seats:write'],
      roles: ['admin'],
      allowServiceOnly: true,
    });
    expect(
      grpcPathAuthorization.get('/com.example.payments.v1.PaymentGatewayService/ProcessPayment')
        ?.allowServiceOnly,
    ).toBe(true);
    expect(
      grpcPathAuthorization.get('/com.example.notifications.v1.NotificationService/SendSMSNotification')
        ?.allowServiceOnly,
    ).toBe(true);
  });

  it('cannot be changed by a caller', () => {
    const policy = bookingServiceAuthorization.get('CreateBooking');
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy?.scopes)).toBe(true);
  });
});

describe('sensitive field options', () => {
  it.each(['first_name', 'last_name', 'email', 'phone', 'contact_email', 'contact_phone', 'payment_token'])(
    '%s is sensitive',
    (fieldName) => {
      expect(sensitiveFieldNames.has(fieldName)).toBe(true);
    },
  );

  it.each(['seat_number', 'fare_class', 'id', 'booking_id', 'trip_id', 'decline_reason', 'amount_minor'])(
    '%s is not sensitive',
    (fieldName) => {
      expect(sensitiveFieldNames.has(fieldName)).toBe(false);
    },
  );

  it('marks personal and payment data in every contract that carries it', () => {
    const qualifiedNames = sensitiveFields.map((field) => `${field.messageName}.${field.fieldName}`);
    expect(qualifiedNames).toEqual(
      expect.arrayContaining([
        'com.example.bookings.v1.Passenger.first_name',
        'com.example.bookings.v1.Booking.contact_email',
        'com.example.bookings.v1.PaymentSummary.method',
        'com.example.bookings.v1.User.display_name',
        'com.example.bookings.v1.ConfirmPaymentRequest.payment_token',
        'com.example.bookings.v1.Ticket.passenger_name',
        'com.example.bookings.v1.Ticket.qr_payload',
        'com.example.bookings.v1.CreateWebhookEndpointResponse.secret',
        'com.example.bookings.v1.RotateWebhookSecretResponse.secret',
        'com.example.payments.v1.ProcessPaymentRequest.payment_token',
        'com.example.payments.v1.ProcessPaymentResponse.method',
        'com.example.notifications.v1.SendEmailNotificationRequest.recipient',
        'com.example.notifications.v1.SendSMSNotificationRequest.template_parameters',
      ]),
    );
  });

  it('gives the generated TypeScript property names too', () => {
    expect(sensitivePropertyNames).toEqual(
      new Set([
        'birthDate',
        'firstName',
        'lastName',
        'email',
        'phone',
        'contactEmail',
        'contactPhone',
        'method',
        'displayName',
        'paymentToken',
        'paymentMethod',
        'clientSecret',
        'ticket',
        'recipient',
        'templateParameters',
        'passengerName',
        'qrPayload',
        'secret',
      ]),
    );
  });
});

describe('google.api.http bindings', () => {
  it('names the REST operation of each BookingService RPC', () => {
    expect(grpcPathHttpBindings.get('/com.example.bookings.v1.BookingService/CreateBooking')).toEqual({
      httpMethod: 'POST',
      path: '/v1/bookings',
    });
    expect(grpcPathHttpBindings.get('/com.example.bookings.v1.BookingService/CancelBooking')).toEqual({
      httpMethod: 'PUT',
      path: '/v1/bookings/{booking_id}/cancel',
    });
  });

  it('has none for the internal services, which have no REST twin', () => {
    expect(grpcPathHttpBindings.has('/com.example.seats.v1.SeatReservationService/ReserveSeats')).toBe(false);
  });
});

describe('contract file registry', () => {
  it('covers every .proto file of our own packages, internal services included', () => {
    const protoRoot = path.join(__dirname, '../../../proto');
    const protoFileNames = protoFilesUnder(path.join(protoRoot, 'com/example')).map((file) =>
      path.relative(protoRoot, file).split(path.sep).join('/'),
    );
    expect(protoFileNames).toContain('com/example/seats/v1/seat_reservation_service.proto');
    expect(contractFiles.map((file) => file.proto.name).sort()).toEqual(protoFileNames.sort());
  });
});
