// ReadThroughCache: answers kept for their time to live, bounded, identical reads in flight sharing one load,
// forgotten on a change and kept only while changes are heard.
import { ReadThroughCache } from '../../../src/application/read-through-cache';

describe('ReadThroughCache', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('answers a kept value until its time to live passes, then loads again', async () => {
    const cache = new ReadThroughCache<string>({ timeToLiveMs: 1000, maximumEntries: 10, now });
    const load = jest.fn().mockResolvedValueOnce('first').mockResolvedValueOnce('second');
    expect(await cache.read('key', load)).toBe('first');
    clock += 999;
    expect(await cache.read('key', load)).toBe('first');
    clock += 1;
    expect(await cache.read('key', load)).toBe('second');
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('keeps each answer for its own share of the time to live, never past it, with an expiry spread', async () => {
    const shares = [0, 0.5, 0.999];
    const cache = new ReadThroughCache<string>({
      timeToLiveMs: 1000,
      maximumEntries: 10,
      expirySpread: 0.2,
      now,
      random: () => shares.shift() ?? 0,
    });
    const load = jest.fn((key: string) => Promise.resolve(`${key} at ${clock}`));
    for (const key of ['whole', 'nine tenths', 'four fifths']) await cache.read(key, () => load(key));
    const keptAt = clock;
    const stillKept = async () => {
      const answers = await Promise.all(
        ['whole', 'nine tenths', 'four fifths'].map((key) => cache.read(key, () => load(key))),
      );
      return answers.filter((answer) => answer.endsWith(`at ${keptAt}`)).length;
    };
    clock = keptAt + 800;
    expect(await stillKept()).toBe(3);
    clock = keptAt + 801;
    expect(await stillKept()).toBe(2);
    clock = keptAt + 900;
    expect(await stillKept()).toBe(1);
    clock = keptAt + 1000;
    expect(await stillKept()).toBe(0);
  });

  it('shares one load among identical reads in flight, even when it keeps nothing', async () => {
    const cache = new ReadThroughCache<string>({ timeToLiveMs: 0, maximumEntries: 10, now });
    let finish: (value: string) => void = () => undefined;
    const load = jest.fn(() => new Promise<string>((resolve) => (finish = resolve)));
    const reads = [cache.read('key', load), cache.read('key', load)];
    finish('shared');
    expect(await Promise.all(reads)).toEqual(['shared', 'shared']);
    expect(load).toHaveBeenCalledTimes(1);
    await cache.read('key', () => Promise.resolve('later'));
    expect(await cache.read('key', () => Promise.resolve('again'))).toBe('again');
  });

  it('never keeps a failed load', async () => {
    const cache = new ReadThroughCache<string>({ timeToLiveMs: 1000, maximumEntries: 10, now });
    await expect(cache.read('key', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.read('key', () => Promise.resolve('up'))).toBe('up');
  });

  it('keeps at most maximumEntries answers, the least recently used leaving first', async () => {
    const cache = new ReadThroughCache<string>({ timeToLiveMs: 1000, maximumEntries: 2, now });
    await cache.read('a', () => Promise.resolve('a1'));
    await cache.read('b', () => Promise.resolve('b1'));
    await cache.read('a', () => Promise.resolve('a2'));
    await cache.read('c', () => Promise.resolve('c1'));
    expect(await cache.read('b', () => Promise.resolve('b2'))).toBe('b2');
    expect(await cache.read('c', () => Promise.resolve('c2'))).toBe('c1');
  });

  it('forgets the answers a change touches and keeps the others', async () => {
    const cache = new ReadThroughCache<string>({ timeToLiveMs: 1000, maximumEntries: 10, now });
    await cache.read('route-1/2031-01-01', () => Promise.resolve('one before'));
    await cache.read('route-2/2031-01-01', () => Promise.resolve('two before'));
    cache.forgetWhere((key) => key.startsWith('route-1/'));
    expect(await cache.read('route-1/2031-01-01', () => Promise.resolve('one after'))).toBe('one after');
    expect(await cache.read('route-2/2031-01-01', () => Promise.resolve('two after'))).toBe('two before');
    cache.forgetAll();
    expect(await cache.read('route-2/2031-01-01', () => Promise.resolve('two again'))).toBe('two again');
  });

  it('does not keep a load that was under way when its key was forgotten, nor hand it to later reads', async () => {
    const cache = new ReadThroughCache<string>({ timeToLiveMs: 1000, maximumEntries: 10, now });
    let finishStale: (value: string) => void = () => undefined;
    const staleRead = cache.read('key', () => new Promise<string>((resolve) => (finishStale = resolve)));
    cache.forgetWhere((key) => key === 'key');
    const freshLoad = jest.fn(() => Promise.resolve('fresh'));
    const freshRead = cache.read('key', freshLoad);
    finishStale('stale');
    expect(await staleRead).toBe('stale');
    expect(await freshRead).toBe('fresh');
    expect(freshLoad).toHaveBeenCalledTimes(1);
    expect(await cache.read('key', () => Promise.resolve('later'))).toBe('fresh');
  });

  it('keeps and serves answers only while keepWhile holds', async () => {
    let hearing = false;
    const cache = new ReadThroughCache<string>({
      timeToLiveMs: 1000,
      maximumEntries: 10,
      now,
      keepWhile: () => hearing,
    });
    await cache.read('key', () => Promise.resolve('unheard'));
    hearing = true;
    expect(await cache.read('key', () => Promise.resolve('heard'))).toBe('heard');
    expect(await cache.read('key', () => Promise.resolve('again'))).toBe('heard');
    hearing = false;
    expect(await cache.read('key', () => Promise.resolve('deaf'))).toBe('deaf');
    hearing = true;
    expect(await cache.read('key', () => Promise.resolve('back'))).toBe('back');
  });
});
