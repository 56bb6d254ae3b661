// Stops the workflow tier's Temporal server and removes its bundle.
import type { WorkflowTierServers } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { bookingWorkflowTier?: WorkflowTierServers }).bookingWorkflowTier?.stop();
}
