// Unit tests: bearer tokens from gRPC metadata, and the proto option's scopes, roles and service-only rule.
import { Metadata } from '@grpc/grpc-js';
import { authorizeCaller, bearerTokenOf } from '../../../src/api/grpc/caller-authorization';
import type { Actor } from '../../../src/domain/actor';
import { DomainError, unauthenticated } from '../../../src/domain/errors';
import { BookingServiceService } from '../../../src/generated/com/example/bookings/v1/booking_service';

const customer: Actor = { userId: 'u-1', roles: ['customer'], scopes: ['bookings:read', 'bookings:write'] };
const getBookingPath = BookingServiceService.getBooking.path;
const confirmPaymentPath = BookingServiceService.confirmPayment.path;

function metadataWith(...authorizations: string[]): Metadata {
  const metadata = new Metadata();
  for (const value of authorizations) metadata.add('authorization', value);
  return metadata;
}

/** The error code `work` fails with, sync or async; 'OK' when it succeeds. */
async function codeOf(work: () => unknown): Promise<string> {
  try {
    await work();
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return 'OK';
}

const verify = (token: string): Promise<Actor> => {
  if (token === 'customer') return Promise.resolve(customer);
  if (token === 'payer') return Promise.resolve({ ...customer, scopes: ['payments:write'] });
  if (token === 'roleless') return Promise.resolve({ ...customer, roles: [] });
  return Promise.reject(unauthenticated('bad token'));
};

describe('bearerTokenOf', () => {
  it('reads the token of a Bearer authorization, whatever the scheme case', () => {
    expect(bearerTokenOf(metadataWith('Bearer abc.def-ghi_jkl'))).toBe('abc.def-ghi_jkl');
    expect(bearerTokenOf(metadataWith('bearer abc'))).toBe('abc');
  });

  it('has no token without authorization metadata', () => {
    expect(bearerTokenOf(new Metadata())).toBeUndefined();
  });

  it.each([['Basic dXNlcjpwYXNz'], ['Bearer'], ['Bearer two tokens'], ['']])(
    'refuses "%s"',
    async (value) => {
      await expect(codeOf(() => bearerTokenOf(metadataWith(value)))).resolves.toBe('UNAUTHENTICATED');
    },
  );

  it('refuses two authorization entries', async () => {
    await expect(codeOf(() => bearerTokenOf(metadataWith('Bearer a', 'Bearer b')))).resolves.toBe(
      'UNAUTHENTICATED',
    );
  });
});

describe('authorizeCaller', () => {
  it('returns the verified user and the calling service', async () => {
    await expect(
      authorizeCaller(metadataWith('Bearer customer'), 'booking-cli', getBookingPath, verify),
    ).resolves.toEqual({ actor: customer, serviceIdentity: 'booking-cli' });
  });

  it('refuses a token the verifier rejects', async () => {
    await expect(
      codeOf(() => authorizeCaller(metadataWith('Bearer forged'), 'booking-cli', getBookingPath, verify)),
    ).resolves.toBe('UNAUTHENTICATED');
  });

  it('refuses a caller missing the scope of the method option', async () => {
    await expect(
      codeOf(() =>
        authorizeCaller(metadataWith('Bearer customer'), 'booking-cli', confirmPaymentPath, verify),
      ),
    ).resolves.toBe('PERMISSION_DENIED');
    await expect(
      authorizeCaller(metadataWith('Bearer payer'), 'booking-cli', confirmPaymentPath, verify),
    ).resolves.toMatchObject({ actor: { scopes: ['payments:write'] } });
  });

  it('refuses a caller with none of the roles of the method option', async () => {
    await expect(
      codeOf(() => authorizeCaller(metadataWith('Bearer roleless'), 'booking-cli', getBookingPath, verify)),
    ).resolves.toBe('PERMISSION_DENIED');
  });

  it('refuses a call without a user token on a method that does not allow service-only calls', async () => {
    await expect(
      codeOf(() => authorizeCaller(new Metadata(), 'booking-cli', getBookingPath, verify)),
    ).resolves.toBe('UNAUTHENTICATED');
  });
});
