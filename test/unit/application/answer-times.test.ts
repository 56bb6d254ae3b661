// A create's answer time is read on the clock its application was given, not the machine's.
import { answerByOf } from '../../../src/application/command-options';
import { settledBy } from '../../../src/application/create-answers';

const injected = new Date('2030-01-01T00:00:00Z');

describe('answerByOf', () => {
  it('counts from the injected clock when the front did not say when the request arrived', () => {
    expect(answerByOf({}, 500, () => injected)).toBe(injected.getTime() + 500);
  });

  it('counts from the arrival, and keeps the caller’s sooner deadline', () => {
    expect(answerByOf({ receivedAt: 1000 }, 500, () => injected)).toBe(1500);
    expect(answerByOf({ receivedAt: 1000, answerBy: 1200 }, 500, () => injected)).toBe(1200);
  });
});

describe('settledBy', () => {
  it('gives up at once when the injected clock is past the deadline', async () => {
    const never = new Promise<string>(() => undefined);
    await expect(settledBy(never, injected.getTime() - 1, () => injected)).resolves.toBeUndefined();
  });

  it('answers the value when it comes before the deadline on the injected clock', async () => {
    await expect(
      settledBy(Promise.resolve('held'), injected.getTime() + 60_000, () => injected),
    ).resolves.toBe('held');
  });
});
