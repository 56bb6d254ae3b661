// The columns of the authorization matrix: one kind of caller or token defect each, minted against a real provider.
import { randomUUID } from 'node:crypto';
import { UnsecuredJWT } from 'jose';
import request from 'supertest';
import { scopesForRoles } from '../../../src/security/policy';
import { mintToken, type IdentityFixture } from './identity-fixture';

/** What a cell expects: rejected before the handler, refused by policy, hidden by ownership, or served. */
export type Outcome = 'UNAUTHENTICATED' | 'PERMISSION_DENIED' | 'NOT_FOUND' | 'OK';

export interface Requirement {
  scopes: readonly string[];
  /** `owner-or-staff` resources answer NOT_FOUND to other customers. */
  ownedByCustomers: boolean;
}

export interface Cell {
  name: string;
  /** The Authorization header (or gRPC metadata) value; none for the no-token cell. */
  authorization(requirement: Requirement): Promise<string | undefined>;
  /** Whose resource the call is about: the caller's own, or another customer's. */
  resourceOwner: 'caller' | 'another customer';
  expected(requirement: Requirement): Outcome;
}

const allScopes = scopesForRoles(['customer', 'agent', 'admin']);
const customerScopes = scopesForRoles(['customer']);
const unauthenticated = (): Outcome => 'UNAUTHENTICATED';

export async function authorizationCells(fixture: IdentityFixture): Promise<Cell[]> {
  const owner = await fixture.createUser(['customer']);
  const { body: ownerTokens } = await request(fixture.server)
    .post('/api/auth/login')
    .send({ email: owner.email, password: owner.password });
  const customerClaims = { sub: owner.id, scope: customerScopes.join(' '), roles: ['customer'] };
  const now = Math.floor(Date.now() / 1000);
  const bearer = (token: string) => `Bearer ${token}`;
  const fixed = (value: string | undefined) => () => Promise.resolve(value);

  const expired = bearer(await mintToken(fixture, { ...customerClaims, iat: now - 600, exp: now - 120 }));
  const wrongIssuer = bearer(
    await mintToken(fixture, { ...customerClaims, iss: 'https://issuer.evil.example' }),
  );
  const wrongAudience = bearer(await mintToken(fixture, { ...customerClaims, aud: 'some-other-api' }));
  const unsigned = bearer(
    new UnsecuredJWT({ ...customerClaims, iss: fixture.issuer, aud: 'bus-booking-api' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .encode(),
  );
  const unknownKid = bearer(
    await mintToken(fixture, customerClaims, { kid: `unknown-${randomUUID()}`, signWithStrangerKey: true }),
  );
  const badSignature = bearer(await mintToken(fixture, customerClaims, { signWithStrangerKey: true }));
  const noRole = bearer(await mintToken(fixture, { ...customerClaims, roles: ['guest'] }));
  const agent = bearer(
    await mintToken(fixture, { sub: randomUUID(), scope: allScopes.join(' '), roles: ['agent'] }),
  );
  const admin = bearer(
    await mintToken(fixture, { sub: randomUUID(), scope: allScopes.join(' '), roles: ['admin'] }),
  );
  const scopeGaps = new Map<string, string>();

  return [
    { name: 'no token', authorization: fixed(undefined), resourceOwner: 'caller', expected: unauthenticated },
    {
      name: 'malformed token',
      authorization: fixed('Bearer not-a.jwt'),
      resourceOwner: 'caller',
      expected: unauthenticated,
    },
    {
      name: 'not a Bearer header',
      authorization: fixed(`Basic ${Buffer.from('user:pass').toString('base64')}`),
      resourceOwner: 'caller',
      expected: unauthenticated,
    },
    { name: 'expired', authorization: fixed(expired), resourceOwner: 'caller', expected: unauthenticated },
    {
      name: 'wrong issuer',
      authorization: fixed(wrongIssuer),
      resourceOwner: 'caller',
      expected: unauthenticated,
    },
    {
      name: 'wrong audience',
      authorization: fixed(wrongAudience),
      resourceOwner: 'caller',
      expected: unauthenticated,
    },
    { name: 'alg none', authorization: fixed(unsigned), resourceOwner: 'caller', expected: unauthenticated },
    {
      name: 'unknown kid',
      authorization: fixed(unknownKid),
      resourceOwner: 'caller',
      expected: unauthenticated,
    },
    {
      name: 'bad signature',
      authorization: fixed(badSignature),
      resourceOwner: 'caller',
      expected: unauthenticated,
    },
    {
      name: 'missing scope',
      // Every scope a customer may hold except the ones this operation needs.
      authorization: async (requirement) => {
        const key = requirement.scopes.join(' ');
        if (!scopeGaps.has(key)) {
          const scopes = customerScopes.filter((scope) => !requirement.scopes.includes(scope));
          scopeGaps.set(
            key,
            bearer(await mintToken(fixture, { ...customerClaims, scope: scopes.join(' ') })),
          );
        }
        return scopeGaps.get(key);
      },
      resourceOwner: 'caller',
      expected: () => 'PERMISSION_DENIED',
    },
    {
      name: 'no role of ours',
      authorization: fixed(noRole),
      resourceOwner: 'caller',
      expected: () => 'PERMISSION_DENIED',
    },
    {
      name: 'another customer’s resource',
      authorization: fixed(bearer(ownerTokens.access_token)),
      resourceOwner: 'another customer',
      expected: (requirement) => (requirement.ownedByCustomers ? 'NOT_FOUND' : 'OK'),
    },
    {
      name: 'agent role',
      authorization: fixed(agent),
      resourceOwner: 'another customer',
      expected: () => 'OK',
    },
    {
      name: 'admin role',
      authorization: fixed(admin),
      resourceOwner: 'another customer',
      expected: () => 'OK',
    },
    {
      name: 'valid owner',
      authorization: fixed(bearer(ownerTokens.access_token)),
      resourceOwner: 'caller',
      expected: () => 'OK',
    },
  ];
}
