// The document's examples are safe to send as they are: Swagger UI fills them in, and a first try must not act live.
import { expect } from '@jest/globals';
import { resolveDocumentReference } from '../../../src/api/rest/openapi-validation';
import { openApiDocument, openApiOperations } from '../../../src/contracts/openapi-document';
import { demoUsers } from '../../../dev/seed/demo-users';

type Node = Record<string, unknown>;

function resolve(node: unknown): Node {
  return resolveDocumentReference(openApiDocument, node) as Node;
}

/** Every parameter of every operation, resolved, with the operation it belongs to. */
function parameters(): { operationId: string; parameter: Node }[] {
  return openApiOperations.flatMap((operation) => {
    const definition = openApiDocument.paths[operation.documentedPath][
      operation.method.toLowerCase()
    ] as Node;
    return ((definition.parameters ?? []) as unknown[]).map((parameter) => ({
      operationId: operation.operationId,
      parameter: resolve(parameter),
    }));
  });
}

/** An example the parameter or its schema gives, which Swagger UI would send on a first try. */
function prefilled(parameter: Node): unknown[] {
  const schema = resolve(parameter.schema);
  return [parameter.example, parameter.examples, schema.example, schema.examples, schema.default].filter(
    (value) => value !== undefined,
  );
}

describe('examples', () => {
  it('give no header a value: a fixed Idempotency-Key, X-Request-Id or If-Match would act on live data', () => {
    const headers = parameters().filter(({ parameter }) => parameter.in === 'header');
    expect(headers.map(({ parameter }) => parameter.name)).toEqual(
      expect.arrayContaining(['Idempotency-Key', 'X-Request-Id', 'If-Match']),
    );
    const withExamples = headers
      .filter(({ parameter }) => prefilled(parameter).length > 0)
      .map(({ operationId, parameter }) => `${operationId} ${String(parameter.name)}`);
    expect(withExamples).toEqual([]);
  });

  it('give no page token: only a listing issues one', () => {
    const pageTokens = parameters().filter(({ parameter }) => parameter.name === 'page_token');
    expect(pageTokens.length).toBeGreaterThan(0);
    for (const { parameter } of pageTokens) expect(prefilled(parameter)).toEqual([]);
  });

  it('sign in as a demo account of the embedded stack', () => {
    const login = openApiOperations.find((operation) => operation.operationId === 'login')!;
    const definition = openApiDocument.paths[login.path].post as Node;
    const content = resolve(definition.requestBody).content as Record<string, { examples: Node }>;
    const examples = Object.values(content['application/json'].examples).map(
      (example) => resolve(example).value as { email: string; password: string },
    );
    expect(examples.length).toBeGreaterThan(0);
    for (const { email, password } of examples) {
      expect(demoUsers.map((user) => ({ email: user.email, password: user.password }))).toContainEqual({
        email,
        password,
      });
    }
  });
});
