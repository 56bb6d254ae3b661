// The verified-token cache: answers a token until it expires or its maximum age passes, bounded, least recently used out.
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { DomainError } from '../../../src/domain/errors';
import { createTokenVerifier, type TokenVerifierOptions } from '../../../src/security/token-verifier';
import { VerifiedTokenCache } from '../../../src/security/verified-token-cache';

describe('VerifiedTokenCache', () => {
  let clock = 1_000_000;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('answers a remembered token until the token expires, and not after', () => {
    const cache = new VerifiedTokenCache<string>({ maximumEntries: 10, maximumAgeMs: 60_000, now });
    cache.remember('token-a', 'caller-a', clock + 5_000);
    expect(cache.get('token-a')).toBe('caller-a');
    clock += 4_999;
    expect(cache.get('token-a')).toBe('caller-a');
    clock += 1;
    expect(cache.get('token-a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('trusts an entry no longer than its maximum age, however late the token expires', () => {
    const cache = new VerifiedTokenCache<string>({ maximumEntries: 10, maximumAgeMs: 1_000, now });
    cache.remember('token-a', 'caller-a', clock + 3_600_000);
    clock += 1_000;
    expect(cache.get('token-a')).toBeUndefined();
  });

  it('never remembers a token that has already expired', () => {
    const cache = new VerifiedTokenCache<string>({ maximumEntries: 10, maximumAgeMs: 60_000, now });
    cache.remember('token-a', 'caller-a', clock);
    expect(cache.get('token-a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps at most maximumEntries tokens, dropping the least recently used first', () => {
    const cache = new VerifiedTokenCache<string>({ maximumEntries: 2, maximumAgeMs: 60_000, now });
    cache.remember('token-a', 'caller-a', clock + 10_000);
    cache.remember('token-b', 'caller-b', clock + 10_000);
    expect(cache.get('token-a')).toBe('caller-a');
    cache.remember('token-c', 'caller-c', clock + 10_000);
    expect(cache.size).toBe(2);
    expect(cache.get('token-b')).toBeUndefined();
    expect(cache.get('token-a')).toBe('caller-a');
    expect(cache.get('token-c')).toBe('caller-c');
  });

  it('answers only the very token it remembered, however much of its end another token shares', () => {
    const cache = new VerifiedTokenCache<string>({ maximumEntries: 10, maximumAgeMs: 60_000, now });
    const signature = 'x'.repeat(342);
    const remembered = `header.payload-a.${signature}`;
    cache.remember(remembered, 'caller-a', clock + 10_000);
    expect(cache.get(`header.payload-b.${signature}`)).toBeUndefined();
    expect(cache.get(`Header.payload-a.${signature}`)).toBeUndefined();
    expect(cache.get(signature)).toBeUndefined();
    // The remembered token itself, arriving as a string of its own (as each request's header does).
    expect(cache.get(['header', 'payload-a', signature].join('.'))).toBe('caller-a');
  });

  it('remembers two tokens that end alike as one entry: the newer answers, the older is verified again', () => {
    const cache = new VerifiedTokenCache<string>({ maximumEntries: 10, maximumAgeMs: 60_000, now });
    const ending = 'y'.repeat(40);
    cache.remember(`first.${ending}`, 'caller-first', clock + 10_000);
    cache.remember(`second.${ending}`, 'caller-second', clock + 10_000);
    expect(cache.get(`second.${ending}`)).toBe('caller-second');
    expect(cache.get(`first.${ending}`)).toBeUndefined();
  });

  it('remembers nothing with maximumEntries 0', () => {
    const cache = new VerifiedTokenCache<string>({ maximumEntries: 0, maximumAgeMs: 60_000, now });
    cache.remember('token-a', 'caller-a', clock + 10_000);
    expect(cache.get('token-a')).toBeUndefined();
  });
});

describe('createTokenVerifier with its verified-token cache', () => {
  const issuer = 'https://id.example.com';
  const audience = 'bus-booking-api';
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  let publicJwk: JWK;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { modulusLength: 2048 });
    privateKey = pair.privateKey;
    publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' };
  });

  function tokenExpiringAt(expiresAtSeconds: number, subject = 'user-1'): Promise<string> {
    return new SignJWT({
      iss: issuer,
      aud: audience,
      sub: subject,
      scope: 'routes:read',
      roles: ['customer'],
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'key-1' })
      .setIssuedAt(expiresAtSeconds - 300)
      .setExpirationTime(expiresAtSeconds)
      .sign(privateKey);
  }

  function verifierAt(
    clock: { now: number },
    keySetSource: TokenVerifierOptions['keySetSource'],
    overrides: Partial<TokenVerifierOptions> = {},
  ) {
    return createTokenVerifier({
      issuer,
      audience,
      algorithms: ['RS256'],
      clockToleranceSeconds: 0,
      keySetSource,
      now: () => clock.now,
      ...overrides,
    });
  }

  async function codeOf(promise: Promise<unknown>): Promise<string> {
    try {
      await promise;
      return 'OK';
    } catch (error) {
      return error instanceof DomainError ? `${error.code}: ${error.message}` : 'THREW';
    }
  }

  it('refuses a token it verified before once the token has expired', async () => {
    const clock = { now: Date.now() };
    const expiresAtSeconds = Math.floor(clock.now / 1000) + 60;
    const token = await tokenExpiringAt(expiresAtSeconds);
    const verifier = verifierAt(clock, () => Promise.resolve({ keys: [publicJwk] }));

    await expect(verifier.verifyAccessToken(token)).resolves.toMatchObject({ userId: 'user-1' });
    clock.now = expiresAtSeconds * 1000 + 1_000;
    expect(await codeOf(verifier.verifyAccessToken(token))).toBe('UNAUTHENTICATED: The access token expired');
  });

  it('verifies a remembered token afresh once the key-set cache age has passed, so a withdrawn key stops it', async () => {
    const clock = { now: Date.now() };
    const token = await tokenExpiringAt(Math.floor(clock.now / 1000) + 3600);
    const localUserIdFor = jest.fn(() => Promise.resolve('local-user-1'));
    const verifier = verifierAt(clock, () => Promise.resolve({ keys: [publicJwk] }), {
      keyCacheMaxAgeMs: 60_000,
      localAccounts: { localUserIdFor },
    });

    await verifier.verifyAccessToken(token);
    clock.now += 59_999;
    await verifier.verifyAccessToken(token);
    expect(localUserIdFor).toHaveBeenCalledTimes(1);
    clock.now += 1;
    await expect(verifier.verifyAccessToken(token)).resolves.toMatchObject({ userId: 'local-user-1' });
    expect(localUserIdFor).toHaveBeenCalledTimes(2);
  });

  it('does not remember a failed verification: the same token passes once its key can be read', async () => {
    const clock = { now: Date.now() };
    const token = await tokenExpiringAt(Math.floor(clock.now / 1000) + 3600);
    let keys: JWK[] = [];
    const verifier = verifierAt(clock, () => Promise.resolve({ keys }));

    expect(await codeOf(verifier.verifyAccessToken(token))).toBe(
      'UNAUTHENTICATED: The access token is invalid',
    );
    keys = [publicJwk];
    await expect(verifier.verifyAccessToken(token)).resolves.toMatchObject({ userId: 'user-1' });
  });

  it('answers a verified token from the cache: its caller is looked up once, and shared frozen', async () => {
    const clock = { now: Date.now() };
    const token = await tokenExpiringAt(Math.floor(clock.now / 1000) + 3600);
    const localUserIdFor = jest.fn(() => Promise.resolve('local-user-1'));
    const verifier = verifierAt(clock, () => Promise.resolve({ keys: [publicJwk] }), {
      localAccounts: { localUserIdFor },
    });

    const first = await verifier.verifyAccessToken(token);
    const second = await verifier.verifyAccessToken(token);
    expect(second).toBe(first);
    expect(Object.isFrozen(second)).toBe(true);
    expect(localUserIdFor).toHaveBeenCalledTimes(1);
  });

  it("refuses a token whose claims were changed under a remembered token's signature", async () => {
    const clock = { now: Date.now() };
    const token = await tokenExpiringAt(Math.floor(clock.now / 1000) + 3600);
    const verifier = verifierAt(clock, () => Promise.resolve({ keys: [publicJwk] }));
    await expect(verifier.verifyAccessToken(token)).resolves.toMatchObject({ userId: 'user-1' });

    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forgedPayload = Buffer.from(JSON.stringify({ ...claims, sub: 'user-2' })).toString('base64url');
    const forged = [header, forgedPayload, signature].join('.');
    expect(verifier.rememberedActor(forged)).toBeUndefined();
    expect(await codeOf(verifier.verifyAccessToken(forged))).toBe(
      'UNAUTHENTICATED: The access token is invalid',
    );
    await expect(verifier.verifyAccessToken(token)).resolves.toMatchObject({ userId: 'user-1' });
  });

  it('remembers nothing with verifiedTokenCacheSize 0', async () => {
    const clock = { now: Date.now() };
    const token = await tokenExpiringAt(Math.floor(clock.now / 1000) + 3600);
    const localUserIdFor = jest.fn(() => Promise.resolve('local-user-1'));
    const verifier = verifierAt(clock, () => Promise.resolve({ keys: [publicJwk] }), {
      localAccounts: { localUserIdFor },
      verifiedTokenCacheSize: 0,
    });

    await verifier.verifyAccessToken(token);
    await verifier.verifyAccessToken(token);
    expect(localUserIdFor).toHaveBeenCalledTimes(2);
  });
});
