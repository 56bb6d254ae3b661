// Checks the OpenAPI loader: where it finds the document and how it presents operations to router and policy.
import path from 'node:path';
import {
  openApiDocument,
  openApiDocumentPath,
  openApiOperations,
  openApiOperationsById,
} from '../../../src/contracts/openapi-document';

describe('OpenAPI document loader', () => {
  it('reads openapi/openapi.yaml at the project root', () => {
    expect(openApiDocumentPath).toBe(path.resolve(__dirname, '../../../openapi/openapi.yaml'));
    expect(openApiDocument.openapi).toMatch(/^3\.1\./);
  });

  it('converts path templates to router paths', () => {
    expect(openApiOperationsById.get('cancelBookingApi')).toMatchObject({
      method: 'PUT',
      path: '/api/bookings/{booking_id}/cancel',
      routerPath: '/api/bookings/:booking_id/cancel',
      canonicalOperationId: 'cancelBooking',
    });
    expect(openApiOperationsById.get('getJsonWebKeySet')?.routerPath).toBe('/.well-known/jwks.json');
  });

  it('indexes every operation by its unique operationId', () => {
    expect(openApiOperationsById.size).toBe(openApiOperations.length);
  });

  it('gives public operations no scopes, roles or ownership', () => {
    expect(openApiOperationsById.get('login')).toMatchObject({
      public: true,
      scopes: [],
      roles: [],
      ownership: null,
      canonicalOperationId: 'login',
    });
  });

  it('resolves a /api twin to the canonical operation that exists', () => {
    for (const operation of openApiOperations) {
      expect(openApiOperationsById.has(operation.canonicalOperationId)).toBe(true);
    }
  });
});
