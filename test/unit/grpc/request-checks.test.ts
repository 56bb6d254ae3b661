// Unit tests: what every BookingService request is checked for before it reaches the application.
import { assertWellFormedRequest } from '../../../src/api/grpc/booking-mapper';
import { findDomainError } from '../../../src/domain/errors';
import type {
  CreateBookingRequest,
  UpdateBookingRequest,
} from '../../../src/generated/com/example/bookings/v1/booking_service';

function violationsOf(request: object) {
  try {
    assertWellFormedRequest(request);
  } catch (error) {
    const domainError = findDomainError(error);
    if (domainError === undefined) throw error;
    return { code: domainError.code, violations: domainError.fieldViolations };
  }
  return undefined;
}

const passenger = {
  firstName: 'Ana',
  lastName: 'Silva',
  email: 'ana.silva@example.com',
  seatNumber: '12C',
  fareClass: 'STANDARD',
};

const createRequest: CreateBookingRequest = {
  requestId: '8e0f7a1c-2b3d-4e5f-a6b7-c8d9e0f1a2b3',
  tripId: '5a8d2f1e-7c3b-4e9a-b6d4-0e1f2a3b4c5d',
  passengers: [passenger, { ...passenger, seatNumber: '12D' }],
  contactEmail: 'ana.silva@example.com',
};

const nulMessage = 'must not contain the NUL character (U+0000)';

describe('assertWellFormedRequest', () => {
  it('lets a well-formed request through', () => {
    expect(violationsOf(createRequest)).toBeUndefined();
    expect(violationsOf({ ...createRequest, requestId: '' })).toBeUndefined();
  });

  it('refuses U+0000 in any string field, naming it as the proto does', () => {
    expect(
      violationsOf({
        ...createRequest,
        passengers: [passenger, { ...passenger, lastName: 'Sil\u0000va' }],
        contactPhone: '+351\u0000',
      }),
    ).toEqual({
      code: 'VALIDATION_FAILED',
      violations: [
        { field: 'passengers[1].last_name', message: nulMessage },
        { field: 'contact_phone', message: nulMessage },
      ],
    });
    const update: UpdateBookingRequest = {
      bookingId: '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e',
      expectedVersion: 2,
      seatChanges: [{ passengerId: 'p', seatNumber: '14A', fareClass: 'PREMIUM\u0000' }],
      addPassengers: [],
      passengerUpdates: [],
      requestId: '',
    };
    expect(violationsOf(update)?.violations).toEqual([
      { field: 'seat_changes[0].fare_class', message: nulMessage },
    ]);
    expect(violationsOf({ bookingId: '\u0000' })?.violations).toEqual([
      { field: 'booking_id', message: nulMessage },
    ]);
  });

  it('refuses a request_id that REST would refuse as an Idempotency-Key', () => {
    for (const requestId of ['has spaces', 'k'.repeat(256), 'clé', 'a/b']) {
      expect(violationsOf({ ...createRequest, requestId })?.violations.map(({ field }) => field)).toEqual([
        'request_id',
      ]);
    }
    expect(violationsOf({ ...createRequest, requestId: 'k'.repeat(255) })).toBeUndefined();
    expect(violationsOf({ ...createRequest, requestId: 'key\u0000' })?.violations).toEqual([
      { field: 'request_id', message: nulMessage },
    ]);
  });
});
