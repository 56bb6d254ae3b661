// The retry helper: which failures it retries, how many attempts it makes, its pauses, and what it throws in the end.
import { retrying, retryDelayMs, type RetryPolicy } from '../../src/retry';

class Transient extends Error {
  override name = 'Transient';
}

const retryTransient = (error: unknown) => error instanceof Transient;

type RetryNotice = Parameters<NonNullable<RetryPolicy['onRetry']>>[0];

const retryListener = () => jest.fn<void, [RetryNotice]>();

/** Runs `retrying` under fake timers, noting when (in fake milliseconds) each attempt started. */
async function run<T>(
  work: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
): Promise<{ outcome: PromiseSettledResult<T>; startedAt: number[] }> {
  const startedAt: number[] = [];
  const start = Date.now();
  const settled = Promise.allSettled([
    retrying((attempt) => {
      startedAt.push(Date.now() - start);
      return work(attempt);
    }, policy),
  ]);
  await jest.runAllTimersAsync();
  const [outcome] = await settled;
  return { outcome, startedAt };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('retrying', () => {
  it('answers the first success without another attempt', async () => {
    const onRetry = retryListener();
    const { outcome, startedAt } = await run(() => Promise.resolve('done'), {
      attempts: 3,
      retryOn: retryTransient,
      onRetry,
    });
    expect(outcome).toEqual({ status: 'fulfilled', value: 'done' });
    expect(startedAt).toHaveLength(1);
    expect(onRetry).not.toHaveBeenCalled();
  });

  it('retries a retryable failure, numbering the attempts, until one succeeds', async () => {
    const attempts: number[] = [];
    const onRetry = retryListener();
    const { outcome } = await run(
      (attempt) => {
        attempts.push(attempt);
        return attempt < 3 ? Promise.reject(new Transient(`attempt ${attempt}`)) : Promise.resolve(attempt);
      },
      { attempts: 5, retryOn: retryTransient, onRetry },
    );
    expect(outcome).toEqual({ status: 'fulfilled', value: 3 });
    expect(attempts).toEqual([1, 2, 3]);
    expect(onRetry.mock.calls.map(([retry]) => [(retry.error as Error).message, retry.attempt])).toEqual([
      ['attempt 1', 1],
      ['attempt 2', 2],
    ]);
  });

  it('throws a failure it does not retry at once, as it is, without asking `exhausted`', async () => {
    const permanent = new Error('permanent', { cause: new Error('underneath') });
    const exhausted = jest.fn(() => new Error('exhausted'));
    const work = jest.fn(() => Promise.reject(permanent));
    const { outcome } = await run(work, { attempts: 5, retryOn: retryTransient, exhausted });
    expect(outcome).toEqual({ status: 'rejected', reason: permanent });
    expect(work).toHaveBeenCalledTimes(1);
    expect(exhausted).not.toHaveBeenCalled();
  });

  it('stops after the last attempt and throws its error, not an earlier one, with its cause', async () => {
    const cause = new Error('connection refused');
    const work = jest.fn((attempt: number) => Promise.reject(new Transient(`attempt ${attempt}`, { cause })));
    const onRetry = retryListener();
    const { outcome } = await run(work, { attempts: 4, retryOn: retryTransient, onRetry });
    expect(work).toHaveBeenCalledTimes(4);
    expect(onRetry).toHaveBeenCalledTimes(3);
    expect(outcome.status).toBe('rejected');
    const reason = (outcome as PromiseRejectedResult).reason as Error;
    expect(reason).toBeInstanceOf(Transient);
    expect(reason.message).toBe('attempt 4');
    expect(reason.cause).toBe(cause);
  });

  it('lets the caller name what it tried once the attempts run out, the last error as the cause', async () => {
    const errors: Error[] = [];
    const { outcome } = await run(
      () => {
        const error = new Transient(`failure ${errors.length + 1}`);
        errors.push(error);
        return Promise.reject(error);
      },
      {
        attempts: 3,
        retryOn: retryTransient,
        exhausted: (error, attempts) => new Error(`gave up after ${attempts} attempts`, { cause: error }),
      },
    );
    const reason = (outcome as PromiseRejectedResult).reason as Error;
    expect(reason.message).toBe('gave up after 3 attempts');
    expect(reason.cause).toBe(errors[2]);
  });

  it('makes one attempt only when the policy allows one', async () => {
    const work = jest.fn(() => Promise.reject(new Transient('once')));
    const { outcome } = await run(work, { attempts: 1, retryOn: retryTransient });
    expect(work).toHaveBeenCalledTimes(1);
    expect(outcome.status).toBe('rejected');
  });

  it('refuses a policy without an attempt', async () => {
    await expect(
      retrying(() => Promise.resolve(1), { attempts: 0, retryOn: retryTransient }),
    ).rejects.toThrow(RangeError);
  });

  it('pauses twice as long before each attempt, up to the maximum, and says so to onRetry', async () => {
    const onRetry = retryListener();
    const { startedAt } = await run(() => Promise.reject(new Transient('down')), {
      attempts: 6,
      retryOn: retryTransient,
      firstDelayMs: 250,
      maxDelayMs: 1500,
      onRetry,
    });
    expect(startedAt).toEqual([0, 250, 750, 1750, 3250, 4750]);
    expect(onRetry.mock.calls.map(([retry]) => retry.delayMs)).toEqual([250, 500, 1000, 1500, 1500]);
  });

  it('retries at once when no pause is set', async () => {
    const { startedAt } = await run(() => Promise.reject(new Transient('lost')), {
      attempts: 3,
      retryOn: retryTransient,
    });
    expect(startedAt).toEqual([0, 0, 0]);
  });
});

describe('retryDelayMs', () => {
  it('doubles from the first pause and stops at the maximum', () => {
    const policy = { firstDelayMs: 250, maxDelayMs: 5000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => retryDelayMs(policy, attempt))).toEqual([
      250, 500, 1000, 2000, 4000, 5000, 5000,
    ]);
  });
});
