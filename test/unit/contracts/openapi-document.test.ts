// Checks the OpenAPI loader: where it finds the document and how it presents operations to router and policy.
import path from 'node:path';
import {
  documentedOperations,
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
      documentedPath: '/v1/bookings/{booking_id}/cancel',
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

  it('resolves a /api alias to the canonical operation that exists', () => {
    for (const operation of openApiOperations) {
      expect(openApiOperationsById.has(operation.canonicalOperationId)).toBe(true);
    }
  });

  it('documents each operation once and serves every /v1 one under /api too, asking the same', () => {
    expect(documentedOperations.filter((operation) => operation.operationId.endsWith('Api'))).toEqual([]);
    const versioned = documentedOperations.filter((operation) => operation.path.startsWith('/v1/'));
    expect(versioned.length).toBeGreaterThan(0);
    for (const operation of versioned) {
      expect(openApiOperationsById.get(`${operation.operationId}Api`)).toEqual({
        ...operation,
        operationId: `${operation.operationId}Api`,
        path: operation.path.replace(/^\/v1\//, '/api/'),
        routerPath: operation.routerPath.replace(/^\/v1\//, '/api/'),
      });
    }
    expect(openApiOperations).toHaveLength(documentedOperations.length + versioned.length);
  });
});
