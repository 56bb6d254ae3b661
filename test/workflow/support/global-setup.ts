// The workflow tier's one workflow bundle per jest run, and the time-skipping test server each test file starts.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import { bundleBookingWorkflows } from '../../../src/worker/workflow-bundle';

export interface WorkflowTierServers {
  stop(): Promise<void>;
}

/** The server's executable, installed into .tools/ on first use (Maven Central, through mvn). */
function timeSkippingServer(): string {
  const output = execFileSync('bash', [path.join(__dirname, 'time-skipping-server.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return output.trim().split('\n').pop() ?? '';
}

/** Bundled once here rather than by each file: webpack takes seconds, the tests themselves less. */
async function bundleWorkflows(): Promise<{ codePath: string; remove: () => void }> {
  const bundle = await bundleBookingWorkflows(new DefaultLogger('WARN'));
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bookings-workflow-tier-'));
  const codePath = path.join(directory, 'workflow-bundle.js');
  fs.writeFileSync(codePath, bundle.code);
  return { codePath, remove: () => fs.rmSync(directory, { recursive: true, force: true }) };
}

export default async function globalSetup(): Promise<void> {
  process.env.TEMPORAL_TEST_SERVER = timeSkippingServer();
  const bundle = await bundleWorkflows();
  process.env.BOOKING_WORKFLOW_BUNDLE = bundle.codePath;
  const servers: WorkflowTierServers = {
    stop: () => {
      bundle.remove();
      return Promise.resolve();
    },
  };
  (globalThis as { bookingWorkflowTier?: WorkflowTierServers }).bookingWorkflowTier = servers;
}
