// How the cluster runs pace themselves: a pause, and a bounded wait for a condition the run's own state answers.
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every `pollMs` until it holds or `timeoutMs` passes; whether it held. */
export async function waitUntil(condition: () => boolean, timeoutMs: number, pollMs = 200): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await sleep(pollMs);
  }
  return condition();
}
