// Authorization matrix over every OpenAPI operation × token cases, through koa-jwt, the JWKS of a real provider and the policy.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import request from 'supertest';
import { problemDetails, requestIdentity } from '../../../src/api/rest/problem-details';
import type { Actor } from '../../../src/application/interface';
import { openApiOperations, type OpenApiOperation } from '../../../src/contracts/openapi-document';
import { errorCodeMappings } from '../../../src/domain/errors';
import { createLogger } from '../../../src/logger';
import { assertMayActOn } from '../../../src/security/policy';
import { createOperationGuard } from '../../../src/security/rest-authorization';
import { authorizationCells, type Cell, type Outcome } from './authorization-cells';
import { startIdentityFixture, verifierFor, type IdentityFixture } from './identity-fixture';

const otherCustomerId = randomUUID();

/** A stand-in for the real handlers: the contract guard in front, ownership checked like a handler would. */
function matrixApp(fixture: IdentityFixture): http.Server {
  const guard = createOperationGuard(verifierFor(fixture));
  const router = new Router();
  for (const operation of openApiOperations) {
    const method = operation.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](operation.routerPath, guard(operation.operationId), (context) => {
      if (operation.ownership === 'owner-or-staff') {
        const actor = context.state.actor as Actor;
        const owner =
          context.get('X-Test-Resource-Owner') === 'another customer' ? otherCustomerId : actor.userId;
        assertMayActOn(actor, owner, { name: 'Resource', id: 'r-1' });
      }
      context.body = { operationId: operation.operationId };
    });
  }
  const app = new Koa();
  app.use(requestIdentity());
  app.use(problemDetails(createLogger({ level: 'silent', name: 'matrix' })));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return http.createServer(app.callback());
}

function concretePath(operation: OpenApiOperation): string {
  return operation.path.replace(/\{[^}]+\}/g, () => randomUUID());
}

function expectedOutcome(operation: OpenApiOperation, cell: Cell): Outcome {
  // Public operations never look at the token.
  if (operation.public) return 'OK';
  return cell.expected({
    scopes: operation.scopes,
    ownedByCustomers: operation.ownership === 'owner-or-staff',
  });
}

let fixture: IdentityFixture;
let server: http.Server;
let cells: Cell[];

beforeAll(async () => {
  fixture = await startIdentityFixture();
  server = matrixApp(fixture);
  cells = await authorizationCells(fixture);
});

afterAll(async () => {
  await fixture?.close();
});

describe('REST authorization matrix', () => {
  it('covers every operation of the OpenAPI document', () => {
    expect(openApiOperations.length).toBeGreaterThanOrEqual(26);
    expect(openApiOperations.filter((operation) => !operation.public).length).toBeGreaterThanOrEqual(20);
  });

  it.each(openApiOperations.map((operation) => [operation.operationId, operation] as const))(
    '%s answers each token case as the contract says',
    async (_operationId, operation) => {
      const observed: Record<string, string> = {};
      const expected: Record<string, string> = {};
      for (const cell of cells) {
        const authorization = await cell.authorization({
          scopes: operation.scopes,
          ownedByCustomers: operation.ownership === 'owner-or-staff',
        });
        let call = request(server)
          [operation.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](
            concretePath(operation),
          )
          .set('X-Test-Resource-Owner', cell.resourceOwner);
        if (authorization !== undefined) call = call.set('Authorization', authorization);
        const response = await call;
        const outcome = expectedOutcome(operation, cell);
        expected[cell.name] = `${outcome} ${outcome === 'OK' ? 200 : errorCodeMappings[outcome].httpStatus}`;
        observed[cell.name] = `${response.status === 200 ? 'OK' : response.body.code} ${response.status}`;
        if (response.status === 401) {
          expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="bus-booking"/);
          expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
        }
        if (cell.name === 'missing scope' && response.status === 403) {
          expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
        }
      }
      expect(observed).toEqual(expected);
    },
  );
});
