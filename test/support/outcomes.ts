// How a test waits for and reads an outcome: polling until a condition holds, the domain error a call failed with.
import { findDomainError, type DomainError } from '../../src/domain/errors';

/** Polls `probe` until it returns a value `accept` takes, or fails after `timeoutMs` with the last value seen. */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `condition not met in ${options.timeoutMs ?? 15_000} ms; last value ${JSON.stringify(value)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}

/** Polls `probe` until it finds something (not undefined), or fails after `timeoutMs`. */
export async function eventuallyFound<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const found = await eventually(
    async () => probe(),
    (value) => value !== undefined,
    { timeoutMs, intervalMs: 100 },
  );
  return found as T;
}

/** The DomainError a call failed with; undefined when it succeeded or failed with something else. */
export async function domainErrorOf(call: Promise<unknown>): Promise<DomainError | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return findDomainError(error);
  }
}

/** The code of the DomainError a call failed with (or `resolved` when it did not fail). */
export async function errorCodeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'resolved';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}
