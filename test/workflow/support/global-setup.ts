// The workflow tier's one Temporal dev server and one workflow bundle per jest run, shared by every test file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { bundleBookingWorkflows } from '../../../src/worker/workflow-bundle';
import { allSearchAttributes } from '../../../src/workflows/shared';

const { ensureTemporalCli } = require('../../../scripts/temporal-cli.cjs') as {
  ensureTemporalCli: () => string;
};

export interface WorkflowTierServers {
  stop(): Promise<void>;
}

async function startTemporal(): Promise<{ address: string; stop: () => Promise<void> }> {
  const given = process.env.TEMPORAL_ADDRESS;
  if (given !== undefined) return { address: given, stop: async () => {} };
  const environment = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: ensureTemporalCli() },
      searchAttributes: allSearchAttributes,
      ip: '127.0.0.1',
      log: { format: 'pretty', level: 'warn' },
    },
  });
  return { address: environment.address, stop: () => environment.teardown() };
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
  const [temporal, bundle] = await Promise.all([startTemporal(), bundleWorkflows()]);
  process.env.TEMPORAL_ADDRESS = temporal.address;
  process.env.BOOKING_WORKFLOW_BUNDLE = bundle.codePath;
  const servers: WorkflowTierServers = {
    stop: async () => {
      await temporal.stop();
      bundle.remove();
    },
  };
  (globalThis as { bookingWorkflowTier?: WorkflowTierServers }).bookingWorkflowTier = servers;
}
