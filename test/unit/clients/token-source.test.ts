// The client package's token source: when it fetches a token, when it refreshes one, and what it does when that fails.
import { createTokenSource, type IssuedToken } from '@bus-booking/client';

/** A clock the test moves, and a token endpoint that counts its calls and issues `token-1`, `token-2`, ... */
function fixture(expiresInSeconds: number | undefined, options: { refreshMarginSeconds?: number } = {}) {
  let clock = 1_000_000;
  const fetchToken = jest.fn((): Promise<IssuedToken> =>
    Promise.resolve({ accessToken: `token-${fetchToken.mock.calls.length}`, expiresInSeconds }),
  );
  const source = createTokenSource({ fetchToken, now: () => clock, ...options });
  return {
    source,
    fetchToken,
    advance: (seconds: number) => {
      clock += seconds * 1000;
    },
  };
}

describe('createTokenSource', () => {
  it('fetches the first token when first asked, then keeps it until the refresh margin before its expiry', async () => {
    const { source, fetchToken, advance } = fixture(300, { refreshMarginSeconds: 60 });
    expect(fetchToken).not.toHaveBeenCalled();
    await expect(source.accessToken()).resolves.toBe('token-1');
    advance(239);
    await expect(source.accessToken()).resolves.toBe('token-1');
    expect(fetchToken).toHaveBeenCalledTimes(1);
    advance(1);
    await expect(source.accessToken()).resolves.toBe('token-2');
    expect(fetchToken).toHaveBeenCalledTimes(2);
  });

  it('refreshes a short-lived token at half its lifetime when the margin is longer than that', async () => {
    const { source, advance } = fixture(60, { refreshMarginSeconds: 60 });
    await source.accessToken();
    advance(29);
    await expect(source.accessToken()).resolves.toBe('token-1');
    advance(1);
    await expect(source.accessToken()).resolves.toBe('token-2');
  });

  it('uses a one-minute margin by default', async () => {
    const { source, advance } = fixture(3600);
    await source.accessToken();
    advance(3539);
    await expect(source.accessToken()).resolves.toBe('token-1');
    advance(1);
    await expect(source.accessToken()).resolves.toBe('token-2');
  });

  it('lets concurrent requests share one fetch', async () => {
    const { source, fetchToken } = fixture(300);
    const tokens = await Promise.all([source.accessToken(), source.accessToken(), source.accessToken()]);
    expect(tokens).toEqual(['token-1', 'token-1', 'token-1']);
    expect(fetchToken).toHaveBeenCalledTimes(1);
  });

  it('counts a token lifetime from before the request, so a slow token endpoint makes it refresh sooner', async () => {
    let clock = 0;
    const source = createTokenSource({
      now: () => clock,
      refreshMarginSeconds: 10,
      fetchToken: () => {
        clock += 20_000;
        return Promise.resolve({ accessToken: `token-at-${clock}`, expiresInSeconds: 100 });
      },
    });
    await expect(source.accessToken()).resolves.toBe('token-at-20000');
    clock = 89_999;
    await expect(source.accessToken()).resolves.toBe('token-at-20000');
    clock = 90_000;
    await expect(source.accessToken()).resolves.toBe('token-at-110000');
  });

  it('keeps using a still-valid token when its early refresh fails, and tries again on the next request', async () => {
    let clock = 0;
    const fetchToken = jest
      .fn<Promise<IssuedToken>, []>()
      .mockResolvedValueOnce({ accessToken: 'first', expiresInSeconds: 100 })
      .mockRejectedValueOnce(new Error('token endpoint down'))
      .mockResolvedValueOnce({ accessToken: 'second', expiresInSeconds: 100 });
    const source = createTokenSource({ fetchToken, now: () => clock, refreshMarginSeconds: 30 });
    await expect(source.accessToken()).resolves.toBe('first');
    clock = 75_000;
    await expect(source.accessToken()).resolves.toBe('first');
    await expect(source.accessToken()).resolves.toBe('second');
    expect(fetchToken).toHaveBeenCalledTimes(3);
  });

  it('fails the request when the token has expired and no new one can be fetched', async () => {
    let clock = 0;
    const fetchToken = jest
      .fn<Promise<IssuedToken>, []>()
      .mockResolvedValueOnce({ accessToken: 'first', expiresInSeconds: 100 })
      .mockRejectedValueOnce(new Error('token endpoint down'));
    const source = createTokenSource({ fetchToken, now: () => clock });
    await source.accessToken();
    clock = 100_000;
    await expect(source.accessToken()).rejects.toThrow('token endpoint down');
  });

  it('starts from a token already issued and fetches only once that one is due', async () => {
    let clock = 0;
    const fetchToken = jest.fn(() => Promise.resolve({ accessToken: 'refreshed', expiresInSeconds: 300 }));
    const source = createTokenSource({
      initial: { accessToken: 'from-the-code', expiresInSeconds: 300 },
      fetchToken,
      now: () => clock,
    });
    await expect(source.accessToken()).resolves.toBe('from-the-code');
    expect(fetchToken).not.toHaveBeenCalled();
    clock = 240_000;
    await expect(source.accessToken()).resolves.toBe('refreshed');
  });

  it('keeps a token without an expiry until it is invalidated', async () => {
    const { source, fetchToken, advance } = fixture(undefined);
    await source.accessToken();
    advance(365 * 86_400);
    await expect(source.accessToken()).resolves.toBe('token-1');
    source.invalidate();
    await expect(source.accessToken()).resolves.toBe('token-2');
    expect(fetchToken).toHaveBeenCalledTimes(2);
  });

  it('refuses an answer without an access token, and a negative margin', async () => {
    const source = createTokenSource({ fetchToken: () => Promise.resolve({ accessToken: '' }) });
    await expect(source.accessToken()).rejects.toThrow('no access token');
    expect(() => createTokenSource({ fetchToken: jest.fn(), refreshMarginSeconds: -1 })).toThrow(RangeError);
  });
});
