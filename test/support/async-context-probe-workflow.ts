// A workflow that stays open after touching every async context the interceptors keep: its run, an update, a timer and an activity.
import {
  condition,
  defineSignal,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';

export const touchUpdate = defineUpdate<string>('touch');
export const finishSignal = defineSignal('finish');

export interface ProbeActivities {
  probeActivity(): Promise<void>;
}

const { probeActivity } = proxyLocalActivities<ProbeActivities>({ startToCloseTimeout: '30 seconds' });

/** Runs under its start's span and request id; the update's activity runs under the update's; then waits, cached. */
export async function asyncContextProbe(): Promise<void> {
  let finished = false;
  setHandler(touchUpdate, async () => {
    await probeActivity();
    return 'touched';
  });
  setHandler(finishSignal, () => {
    finished = true;
  });
  await sleep(1);
  await condition(() => finished);
}
