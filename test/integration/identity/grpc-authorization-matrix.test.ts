// Authorization matrix over every BookingService RPC × token cases, through the gRPC verification path and the policy.
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../../src/application/interface';
import { DomainError } from '../../../src/domain/errors';
import { BookingServiceService } from '../../../src/generated/com/example/bookings/v1/booking_service';
import { assertMayActOn, authorizeGrpcMethod, grpcMethodAuthorization } from '../../../src/security/policy';
import type { TokenVerifier } from '../../../src/security/token-verifier';
import { authorizationCells, type Cell, type Outcome } from './authorization-cells';
import { startIdentityFixture, verifierFor, type IdentityFixture } from './identity-fixture';

const otherCustomerId = randomUUID();
const methodPaths = Object.values(BookingServiceService).map((method) => method.path);

/** What a gRPC interceptor and handler do: verify the metadata token, apply the proto option, check ownership. */
async function callAs(
  verifier: TokenVerifier,
  path: string,
  authorization: string | undefined,
  owner: Cell['resourceOwner'],
) {
  try {
    const actor: Actor = await verifier.actorFromClaims(await verifier.verifyBearerToken(authorization));
    authorizeGrpcMethod(path, { actor });
    // Every BookingService RPC acts on bookings, which belong to customers.
    assertMayActOn(actor, owner === 'another customer' ? otherCustomerId : actor.userId, {
      name: 'Booking',
      id: 'b-1',
    });
    return 'OK';
  } catch (error) {
    return error instanceof DomainError ? error.code : `THREW ${String(error)}`;
  }
}

let fixture: IdentityFixture;
let verifier: TokenVerifier;
let cells: Cell[];

beforeAll(async () => {
  fixture = await startIdentityFixture();
  verifier = verifierFor(fixture);
  cells = await authorizationCells(fixture);
});

afterAll(async () => {
  await fixture?.close();
});

describe('gRPC authorization matrix', () => {
  it('covers every BookingService RPC', () => {
    expect(methodPaths).toHaveLength(6);
  });

  it.each(methodPaths)('%s answers each token case as the proto option says', async (path) => {
    const requirement = { scopes: grpcMethodAuthorization(path).scopes, ownedByCustomers: true };
    const observed: Record<string, string> = {};
    const expected: Record<string, Outcome> = {};
    for (const cell of cells) {
      observed[cell.name] = await callAs(
        verifier,
        path,
        await cell.authorization(requirement),
        cell.resourceOwner,
      );
      expected[cell.name] = cell.expected(requirement);
    }
    expect(observed).toEqual(expected);
  });

  it('gives the gRPC front a bare-token verifier returning the caller', async () => {
    const owner = await fixture.createUser(['customer']);
    const { access_token: token } = await fixture.identityProvider.login(
      { email: owner.email, password: owner.password },
      '127.0.0.1',
    );
    await expect(verifier.verifyAccessToken(token)).resolves.toMatchObject({
      userId: owner.id,
      roles: ['customer'],
    });
    await expect(verifier.verifyAccessToken('not-a.jwt')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
