// Runs workflow update handlers and timers' transitions one at a time, in arrival order, so their activities never interleave.

/**
 * A promise chain: each piece of work starts when the previous one settled. Plain promises are deterministic
 * in the workflow sandbox, and unlike `condition(() => !busy)` two waiters can never both see the lock free.
 */
export class SerialExecutor {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
