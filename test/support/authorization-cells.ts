// The columns of the authorization matrix: one kind of caller or token defect each, minted against a real provider.
import { randomUUID } from 'node:crypto';
import { UnsecuredJWT, type JWTPayload } from 'jose';
import type { IdentityProvider } from '../../src/identity/identity-provider';
import { scopesForRoles } from '../../src/security/policy';
import { mintToken, testAudience } from './identity-provider';

/** What a cell expects: rejected before the handler, refused by policy, hidden by ownership, or served. */
export type Outcome = 'UNAUTHENTICATED' | 'PERMISSION_DENIED' | 'NOT_FOUND' | 'OK';

export interface Requirement {
  scopes: readonly string[];
  /** The roles that may call the operation; an accepted token of another role is refused. */
  roles: readonly string[];
  /**
   * The operation names one resource by id that belongs to a customer (`owner-or-staff` with an id in the
   * path): another customer gets NOT_FOUND. Collections and `me` are served to everyone, limited to the caller's.
   */
  namesOwnedResource: boolean;
}

/** Who a token that gets through speaks for; every resource a call names belongs to the owner. */
export type Caller = 'owner' | 'another customer' | 'agent' | 'admin';

export interface Cell {
  name: string;
  /** The Authorization header (or gRPC metadata) value; none for the no-token cell. */
  authorization(requirement: Requirement): Promise<string | undefined>;
  caller: Caller;
  expected(requirement: Requirement): Outcome;
}

/** Accounts in the users table, so the handlers find them (bookings and profiles reference users). */
export interface MatrixParties {
  owner: { id: string; email: string; password: string };
  anotherCustomer: { id: string };
  agent: { id: string };
  admin: { id: string };
}

export function partyOf(parties: MatrixParties, caller: Caller): { id: string } {
  const byCaller = {
    owner: parties.owner,
    'another customer': parties.anotherCustomer,
    agent: parties.agent,
    admin: parties.admin,
  } satisfies Record<Caller, { id: string }>;
  return byCaller[caller];
}

const staffScopes = scopesForRoles(['customer', 'agent', 'admin']);
const customerScopes = scopesForRoles(['customer']);
const unauthenticated = (): Outcome => 'UNAUTHENTICATED';

/** Scopes a partner's service client is registered with, and no role: partners' webhook endpoints alone. */
const partnerScopes = ['webhooks:manage'];

/**
 * A verified caller holding these roles and scopes gets through the contract policy (every scope, and one of the
 * roles unless the operation lists none), or is refused it.
 */
const servedWith =
  (
    holds: { roles: readonly string[]; scopes: readonly string[] },
    outcome: (requirement: Requirement) => Outcome = () => 'OK',
  ) =>
  (requirement: Requirement): Outcome => {
    if (!requirement.scopes.every((scope) => holds.scopes.includes(scope))) return 'PERMISSION_DENIED';
    const roleAllowed =
      requirement.roles.length === 0 || requirement.roles.some((role) => holds.roles.includes(role));
    return roleAllowed ? outcome(requirement) : 'PERMISSION_DENIED';
  };

/** A verified caller of this role, with the scopes the embedded provider grants it. */
const servedTo = (role: 'customer' | 'agent' | 'admin', outcome?: (requirement: Requirement) => Outcome) =>
  servedWith({ roles: [role], scopes: role === 'customer' ? customerScopes : staffScopes }, outcome);

export async function authorizationCells(
  identityProvider: IdentityProvider,
  parties: MatrixParties,
): Promise<Cell[]> {
  const authority = { issuer: identityProvider.issuer, identityProvider };
  // The owner's token comes from a real sign-in; the others are minted with the provider's active key.
  const ownerTokens = await identityProvider.login(
    { email: parties.owner.email, password: parties.owner.password },
    '127.0.0.1',
  );
  const ownerClaims = { sub: parties.owner.id, scope: customerScopes.join(' '), roles: ['customer'] };
  const now = Math.floor(Date.now() / 1000);
  const bearer = (token: string) => `Bearer ${token}`;
  const fixed = (value: string | undefined) => () => Promise.resolve(value);
  const minted = async (claims: JWTPayload, options?: Parameters<typeof mintToken>[2]) =>
    bearer(await mintToken(authority, claims, options));

  const expired = await minted({ ...ownerClaims, iat: now - 600, exp: now - 120 });
  const wrongIssuer = await minted({ ...ownerClaims, iss: 'https://issuer.evil.example' });
  const wrongAudience = await minted({ ...ownerClaims, aud: 'some-other-api' });
  const unsigned = bearer(
    new UnsecuredJWT({ ...ownerClaims, iss: authority.issuer, aud: testAudience })
      .setIssuedAt()
      .setExpirationTime('5m')
      .encode(),
  );
  const unknownKid = await minted(ownerClaims, { kid: `unknown-${randomUUID()}`, signWithStrangerKey: true });
  const badSignature = await minted(ownerClaims, { signWithStrangerKey: true });
  const noRole = await minted({ ...ownerClaims, roles: ['guest'] });
  const anotherCustomer = await minted({ ...ownerClaims, sub: parties.anotherCustomer.id });
  const agent = await minted({ sub: parties.agent.id, scope: staffScopes.join(' '), roles: ['agent'] });
  const admin = await minted({ sub: parties.admin.id, scope: staffScopes.join(' '), roles: ['admin'] });
  const partner = await minted({ sub: parties.owner.id, scope: partnerScopes.join(' '), roles: [] });
  const anotherPartner = await minted({
    sub: parties.anotherCustomer.id,
    scope: partnerScopes.join(' '),
    roles: [],
  });
  const scopeGaps = new Map<string, string>();
  const rejected = { caller: 'owner' as const, expected: unauthenticated };

  return [
    { name: 'no token', authorization: fixed(undefined), ...rejected },
    { name: 'malformed token', authorization: fixed('Bearer not-a.jwt'), ...rejected },
    {
      name: 'not a Bearer header',
      authorization: fixed(`Basic ${Buffer.from('user:pass').toString('base64')}`),
      ...rejected,
    },
    { name: 'expired', authorization: fixed(expired), ...rejected },
    { name: 'wrong issuer', authorization: fixed(wrongIssuer), ...rejected },
    { name: 'wrong audience', authorization: fixed(wrongAudience), ...rejected },
    { name: 'alg none', authorization: fixed(unsigned), ...rejected },
    { name: 'unknown kid', authorization: fixed(unknownKid), ...rejected },
    { name: 'bad signature', authorization: fixed(badSignature), ...rejected },
    {
      name: 'missing scope',
      // Every scope a customer may hold except the ones this operation needs.
      authorization: async (requirement) => {
        const key = requirement.scopes.join(' ');
        if (!scopeGaps.has(key)) {
          const scopes = customerScopes.filter((scope) => !requirement.scopes.includes(scope));
          scopeGaps.set(key, await minted({ ...ownerClaims, scope: scopes.join(' ') }));
        }
        return scopeGaps.get(key);
      },
      caller: 'owner',
      // An operation that needs no scope has none to miss: the customer's role alone decides.
      expected: (requirement) =>
        requirement.scopes.length > 0 ? 'PERMISSION_DENIED' : servedTo('customer')(requirement),
    },
    {
      name: 'no role of ours',
      authorization: fixed(noRole),
      caller: 'owner',
      expected: () => 'PERMISSION_DENIED',
    },
    {
      name: 'another customer’s resource',
      authorization: fixed(anotherCustomer),
      caller: 'another customer',
      expected: servedTo('customer', (requirement) => (requirement.namesOwnedResource ? 'NOT_FOUND' : 'OK')),
    },
    { name: 'agent role', authorization: fixed(agent), caller: 'agent', expected: servedTo('agent') },
    { name: 'admin role', authorization: fixed(admin), caller: 'admin', expected: servedTo('admin') },
    {
      name: 'partner service client',
      authorization: fixed(partner),
      caller: 'owner',
      expected: servedWith({ roles: [], scopes: partnerScopes }),
    },
    {
      name: 'another partner’s resource',
      authorization: fixed(anotherPartner),
      caller: 'another customer',
      expected: servedWith({ roles: [], scopes: partnerScopes }, (requirement) =>
        requirement.namesOwnedResource ? 'NOT_FOUND' : 'OK',
      ),
    },
    {
      name: 'valid owner',
      authorization: fixed(bearer(ownerTokens.access_token)),
      caller: 'owner',
      expected: servedTo('customer'),
    },
  ];
}
