// Schema names never collide with the type and function names client generators make from each operationId.
import { expect } from '@jest/globals';
import { openApiDocument, openApiOperations } from '../../../src/contracts/openapi-document';

/**
 * Names oapi-codegen (Go), openapi-generator and openapi-typescript derive from an operationId `listBookings`
 * (`ListBookings` below); a schema of the same name is declared twice in a generated package. `<Id>Request` is
 * left out: generators make it only for an inline body, and here every body is a named schema of that name.
 */
function generatedNames(operationId: string): RegExp[] {
  const id = operationId.charAt(0).toUpperCase() + operationId.slice(1);
  return [
    ...[
      'Response',
      'Params',
      'JSONBody',
      'JSONRequestBody',
      'RequestBody',
      'RequestObject',
      'ResponseObject',
    ].map((suffix) => new RegExp(`^${id}${suffix}$`, 'i')),
    new RegExp(`^(New${id}Request|New${id}RequestWithBody|Parse${id}Response)$`, 'i'),
    // Per-status types of a strict server or typed client: ListBookings200JSONResponse, ListBookingsdefaultResponse.
    new RegExp(`^${id}(\\d{3}|\\dXX|default)[A-Za-z]*Response$`, 'i'),
  ];
}

describe('schema names', () => {
  it('lists the generated names it guards, from the document’s own operations', () => {
    expect(generatedNames('listBookings').some((name) => name.test('ListBookingsResponse'))).toBe(true);
    expect(generatedNames('createBooking').some((name) => name.test('CreateBookingRequest'))).toBe(false);
    expect(openApiOperations.length).toBeGreaterThan(10);
  });

  it('never equal a name a client generator derives from an operationId', () => {
    const schemaNames = Object.keys(openApiDocument.components.schemas);
    const clashes = openApiOperations.flatMap(({ operationId }) =>
      generatedNames(operationId).flatMap((pattern) =>
        schemaNames
          .filter((name) => pattern.test(name))
          .map((name) => `${name} (operationId ${operationId})`),
      ),
    );
    expect(clashes).toEqual([]);
  });
});
