// Removes the workflow tier's bundle.
import type { WorkflowTierServers } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { bookingWorkflowTier?: WorkflowTierServers }).bookingWorkflowTier?.stop();
}
