// Starts localstripe (dev/stack/localstripe.ts) on a loopback port nobody else is told about.
import { startLocalstripe as startOn, type RunningLocalstripe } from '../../dev/stack/localstripe';
import { withFreePort } from './ports';

export { localstripeBinary, localstripeKey, type RunningLocalstripe } from '../../dev/stack/localstripe';

/** An ephemeral port announced to nobody but the tests: localstripe binds every interface. */
export function startLocalstripe(binary: string): Promise<RunningLocalstripe> {
  return withFreePort((port) => startOn({ binary, port }));
}
