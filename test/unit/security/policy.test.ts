// Authorization policy: the contracts agree with each other, scopes and roles are enforced, ownership hides others' data.
import { expect } from '@jest/globals';
import type { Actor } from '../../../src/domain/actor';
import { openApiOperations, type OpenApiOperation } from '../../../src/contracts/openapi-document';
import { bookingServiceAuthorization } from '../../../src/contracts/proto-options';
import { DomainError, notFound } from '../../../src/domain/errors';
import {
  assertAllowed,
  assertMayActOn,
  authorizeGrpcMethod,
  bookingServiceHttpBindings,
  webhookServiceHttpBindings,
  fareServiceHttpBindings,
  findContractDisagreements,
  ownerFilter,
  restOperation,
  scopesForRoles,
} from '../../../src/security/policy';

const customer: Actor = {
  userId: 'customer-1',
  roles: ['customer'],
  scopes: ['bookings:read', 'bookings:write', 'payments:write', 'routes:read', 'users:read'],
};
const otherCustomerId = 'customer-2';
const agent: Actor = { ...customer, userId: 'agent-1', roles: ['agent'] };
const admin: Actor = { ...customer, userId: 'admin-1', roles: ['admin'] };

function codeOf(action: () => void): string {
  try {
    action();
    return 'OK';
  } catch (error) {
    return error instanceof DomainError ? error.code : 'THREW';
  }
}

describe('the two contracts', () => {
  it('ask the same scopes and roles for every BookingService RPC and its REST operation, and for /api twins', () => {
    expect(findContractDisagreements()).toEqual([]);
  });

  it('pair every BookingService RPC with an OpenAPI operation through its google.api.http rule', () => {
    const bindings = bookingServiceHttpBindings();
    expect(bindings.map((binding) => binding.methodName).sort()).toEqual(
      [...bookingServiceAuthorization.keys()].sort(),
    );
    expect(bindings.find((binding) => binding.methodName === 'CreateBooking')).toMatchObject({
      httpMethod: 'POST',
      path: '/v1/bookings',
    });
  });

  it('pair every WebhookService RPC with an OpenAPI operation through its google.api.http rule', () => {
    const bindings = webhookServiceHttpBindings();
    expect(bindings).toHaveLength(10);
    expect(bindings.find((binding) => binding.methodName === 'RotateWebhookSecret')).toMatchObject({
      httpMethod: 'POST',
      path: '/v1/webhooks/endpoints/{endpoint_id}/rotate-secret',
      authorization: { scopes: ['webhooks:manage'], roles: [] },
    });
  });

  it('pair every FareService RPC with an OpenAPI operation through its google.api.http rule', () => {
    const bindings = fareServiceHttpBindings();
    expect(bindings.map((binding) => `${binding.httpMethod} ${binding.path}`).sort()).toEqual([
      'GET /v1/discount-codes',
      'GET /v1/discount-codes/{code}',
      'GET /v1/routes/{route_id}/availability',
      'GET /v1/routes/{route_id}/passenger-types',
      'POST /v1/discount-codes',
    ]);
    expect(bindings.find((binding) => binding.methodName === 'CreateDiscountCode')).toMatchObject({
      authorization: { scopes: ['discounts:manage'], roles: ['agent', 'admin'] },
    });
    expect(findContractDisagreements()).toEqual([]);
  });

  it('grant discounts:manage to agents and admins only', () => {
    expect(scopesForRoles(['agent'])).toContain('discounts:manage');
    expect(scopesForRoles(['admin'])).toContain('discounts:manage');
    expect(scopesForRoles(['customer'])).not.toContain('discounts:manage');
    expect(scopesForRoles(['driver'])).not.toContain('discounts:manage');
  });

  it('are caught disagreeing when the OpenAPI scopes of createBooking drift from the proto', () => {
    const drifted: OpenApiOperation[] = openApiOperations.map((operation) =>
      operation.operationId === 'createBooking' ? { ...operation, scopes: ['bookings:read'] } : operation,
    );
    expect(findContractDisagreements(drifted)).toEqual([
      expect.stringContaining('BookingService.CreateBooking'),
      expect.stringContaining('createBookingApi'),
    ]);
  });

  it('are caught disagreeing when the proto roles of GetBooking drift from the OpenAPI', () => {
    const bindings = bookingServiceHttpBindings().map((binding) =>
      binding.methodName === 'GetBooking'
        ? { ...binding, authorization: { ...binding.authorization, roles: ['admin'] } }
        : binding,
    );
    expect(findContractDisagreements(openApiOperations, bindings)).toEqual([
      expect.stringMatching(/BookingService\.GetBooking .*roles/),
    ]);
  });
});

describe('assertAllowed', () => {
  const createBooking = restOperation('createBooking');

  it('lets a customer, an agent and an admin with the scope through', () => {
    for (const actor of [customer, agent, admin])
      expect(codeOf(() => assertAllowed(actor, createBooking))).toBe('OK');
  });

  it('denies a token without the scope, naming the missing scope for the Bearer challenge', () => {
    const actor = { ...customer, scopes: ['bookings:read'] };
    expect(() => assertAllowed(actor, createBooking)).toThrow(
      expect.objectContaining({
        code: 'PERMISSION_DENIED',
        details: expect.objectContaining({ missingScopes: ['bookings:write'] }),
      }),
    );
  });

  it('denies a caller with none of the roles', () => {
    expect(codeOf(() => assertAllowed({ ...customer, roles: [] }, createBooking))).toBe('PERMISSION_DENIED');
  });

  it('fails at start-up for an operationId the contract does not have', () => {
    expect(() => restOperation('deleteEverything')).toThrow(/no operation "deleteEverything"/);
  });
});

describe('ownership (owner-or-staff)', () => {
  const booking = { name: 'Booking', id: 'b-1' };

  it('lets customers act on their own resources only; another customer’s answers NOT_FOUND exactly like a missing one', () => {
    expect(codeOf(() => assertMayActOn(customer, customer.userId, booking))).toBe('OK');
    let thrown: unknown;
    try {
      assertMayActOn(customer, otherCustomerId, booking);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect((thrown as DomainError).code).toBe('NOT_FOUND');
    expect((thrown as DomainError).message).toBe(notFound('Booking', 'b-1').message);
  });

  it('lets agents and admins act on anyone’s', () => {
    expect(codeOf(() => assertMayActOn(agent, otherCustomerId, booking))).toBe('OK');
    expect(codeOf(() => assertMayActOn(admin, otherCustomerId, booking))).toBe('OK');
  });

  it('limits a customer’s listings to their own, and not staff’s', () => {
    expect(ownerFilter(customer)).toBe(customer.userId);
    expect(ownerFilter(agent)).toBeUndefined();
  });
});

describe('authorizeGrpcMethod', () => {
  const createBooking = '/com.example.bookings.v1.BookingService/CreateBooking';
  const reserveSeats = '/com.example.seats.v1.SeatReservationService/ReserveSeats';

  it('applies the proto option to a user', () => {
    expect(codeOf(() => authorizeGrpcMethod(createBooking, { actor: customer }))).toBe('OK');
    expect(codeOf(() => authorizeGrpcMethod(createBooking, { actor: { ...customer, scopes: [] } }))).toBe(
      'PERMISSION_DENIED',
    );
  });

  it('lets a proven service call without a user token only where the contract allows it', () => {
    expect(codeOf(() => authorizeGrpcMethod(reserveSeats, { serviceIdentity: 'worker' }))).toBe('OK');
    expect(codeOf(() => authorizeGrpcMethod(reserveSeats, {}))).toBe('UNAUTHENTICATED');
    expect(codeOf(() => authorizeGrpcMethod(createBooking, { serviceIdentity: 'worker' }))).toBe(
      'UNAUTHENTICATED',
    );
  });
});

describe('scopesForRoles', () => {
  it('gives customers every scope their operations need, and nothing else', () => {
    expect(scopesForRoles(['customer'])).toEqual([
      'bookings:read',
      'bookings:write',
      'payments:write',
      'routes:read',
      'users:read',
    ]);
  });

  it('gives admins the internal services’ scopes as well', () => {
    expect(scopesForRoles(['admin'])).toEqual(expect.arrayContaining(['seats:write', 'notifications:send']));
  });
});
