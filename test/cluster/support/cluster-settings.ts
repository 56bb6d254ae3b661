// Settings for a cluster stack a test starts: a data folder of its own and every port from one block of 100.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClusterStackConfig } from '../../../dev/stack/settings';

/**
 * Ports `base` … `base + 99`: PostgreSQL, the Temporal services (gRPC, membership, metrics) and the booking
 * processes (REST, gRPC, metrics). Membership ports are stored as smallint by Temporal: keep `base` below 32668.
 */
export function clusterTestSettings(base: number, name: string): Partial<ClusterStackConfig> {
  if (base + 99 > 32767) throw new Error(`cluster test port block ${base} reaches past 32767`);
  const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), `bookings-cluster-${name}-`));
  // Reachable by the postgres account (run as root), so the cluster stays inside and goes with the folder.
  fs.chmodSync(dataDirectory, 0o755);
  return {
    dataDirectory,
    postgresPort: base,
    temporalPort: base + 10,
    temporalMembershipPort: base + 20,
    temporalMetricsPort: base + 30,
    httpPort: base + 40,
    grpcPort: base + 50,
    metricsPort: base + 60,
    temporalHistoryShards: 4,
    temporalTls: true,
  };
}
