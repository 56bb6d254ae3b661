// Settings of the development stacks (`npm start`, `npm run stack:cluster`): tables like the service's, read once.
import path from 'node:path';
import { flag, integer, port, readSettings, text, type Environment } from '../../src/config';

export const stackSettings = {
  STACK_DATA_DIR: text({
    default: '.data',
    description:
      'PostgreSQL cluster, Temporal SQLite file, development keys and certificates, logs, notification outbox; from the project root unless absolute',
  }),
  EMBEDDED_POSTGRES_PORT: port({ default: 54320, description: 'embedded PostgreSQL port' }),
  TEMPORAL_PORT: port({ default: 7233, description: 'Temporal dev server' }),
  TEMPORAL_UI_PORT: port({ default: 8233, description: "the Temporal dev server's Web UI" }),
  TEMPORAL_NAMESPACE: text({
    default: 'default',
    description: 'the namespace the stack creates and its processes use',
  }),
  HTTP_PORT: port({ default: 8080, description: 'REST port of the API process' }),
  GRPC_PORT: port({ default: 50051, description: 'gRPC port of the API process' }),
  METRICS_PORT: port({ default: 9464, description: "the API process's `/metrics` port" }),
  WORKER_METRICS_PORT: port({ default: 9465, description: "the worker process's `/metrics` port" }),
  LOCALSTRIPE_PORT: port({
    default: 8420,
    description:
      'localstripe, started when `PAYMENT_GATEWAY=stripe` and no `STRIPE_SECRET_KEY` is set; it binds every interface',
  }),
};

export const clusterStackSettings = {
  CLUSTER_POSTGRES_PORT: port({ default: 15432, description: 'embedded PostgreSQL port' }),
  CLUSTER_TEMPORAL_PORT: port({
    default: 17233,
    description:
      "Temporal frontend (gRPC); history-1, history-2, matching, worker and the frontend's HTTP API take the next five ports",
  }),
  CLUSTER_TEMPORAL_MEMBERSHIP_PORT: integer({
    default: 16933,
    min: 1024,
    max: 32767 - 4,
    description:
      "first of the five Temporal services' membership (gossip) ports; below 32768 (Temporal stores them as smallint)",
  }),
  CLUSTER_TEMPORAL_METRICS_PORT: port({
    default: 17300,
    description: "first of the five Temporal services' Prometheus ports",
  }),
  CLUSTER_TEMPORAL_HISTORY_SHARDS: integer({
    default: 4,
    min: 1,
    max: 16384,
    description: "history shards, fixed when the cluster's database is first made",
  }),
  CLUSTER_TEMPORAL_TLS: flag({
    default: true,
    description: 'mutual TLS on the frontend with certificates the stack makes (`false`: plaintext)',
  }),
  CLUSTER_HTTP_PORT: port({ default: 18080, description: 'REST of api-1; api-2 takes the next port' }),
  CLUSTER_GRPC_PORT: port({ default: 15051, description: 'gRPC of api-1; api-2 takes the next port' }),
  CLUSTER_METRICS_PORT: port({
    default: 19464,
    description:
      "`/metrics` of api-1, then api-2 and each of the five workers on the next ports (`/healthz`, `/readyz` on the workers')",
  }),
};

export interface StackConfig {
  dataDirectory: string;
  postgresPort: number;
  temporalPort: number;
  temporalUiPort: number;
  httpPort: number;
  grpcPort: number;
  metricsPort: number;
  workerMetricsPort: number;
  localstripePort: number;
  namespace: string;
}

/** Settings of the one-command embedded stack (`npm start`); the processes it runs read `loadConfig`. */
export function loadStackConfig(environment: Environment = process.env, projectRoot: string): StackConfig {
  const values = readSettings(stackSettings, environment);
  return {
    dataDirectory: path.resolve(projectRoot, values.STACK_DATA_DIR),
    postgresPort: values.EMBEDDED_POSTGRES_PORT,
    temporalPort: values.TEMPORAL_PORT,
    temporalUiPort: values.TEMPORAL_UI_PORT,
    httpPort: values.HTTP_PORT,
    grpcPort: values.GRPC_PORT,
    metricsPort: values.METRICS_PORT,
    workerMetricsPort: values.WORKER_METRICS_PORT,
    localstripePort: values.LOCALSTRIPE_PORT,
    namespace: values.TEMPORAL_NAMESPACE,
  };
}

export interface ClusterStackConfig {
  /** `<STACK_DATA_DIR>/cluster`: apart from `npm start`'s data, so both stacks can live side by side. */
  dataDirectory: string;
  postgresPort: number;
  /** The Temporal frontend's gRPC port; the other Temporal services take the next ports (see docs/deployment.md). */
  temporalPort: number;
  /** First of the Temporal services' membership (gossip) ports; stored as PostgreSQL smallint, so below 32768. */
  temporalMembershipPort: number;
  /** First of the Temporal services' Prometheus ports, one per service. */
  temporalMetricsPort: number;
  temporalHistoryShards: number;
  /** First of the API processes' REST ports, gRPC ports and metrics ports: api-1 takes these, api-2 the next. */
  httpPort: number;
  grpcPort: number;
  /** api-1, api-2, then each worker process in order. */
  metricsPort: number;
  /** Mutual TLS on the Temporal frontend (with certificates the stack makes), on unless switched off. */
  temporalTls: boolean;
  namespace: string;
}

/** Settings of `npm run stack:cluster`; its ports default to a range of their own, away from `npm start`'s. */
export function loadClusterStackConfig(
  environment: Environment = process.env,
  projectRoot: string,
): ClusterStackConfig {
  const stack = loadStackConfig(environment, projectRoot);
  const values = readSettings(clusterStackSettings, environment);
  return {
    dataDirectory: path.join(stack.dataDirectory, 'cluster'),
    postgresPort: values.CLUSTER_POSTGRES_PORT,
    temporalPort: values.CLUSTER_TEMPORAL_PORT,
    temporalMembershipPort: values.CLUSTER_TEMPORAL_MEMBERSHIP_PORT,
    temporalMetricsPort: values.CLUSTER_TEMPORAL_METRICS_PORT,
    temporalHistoryShards: values.CLUSTER_TEMPORAL_HISTORY_SHARDS,
    httpPort: values.CLUSTER_HTTP_PORT,
    grpcPort: values.CLUSTER_GRPC_PORT,
    metricsPort: values.CLUSTER_METRICS_PORT,
    temporalTls: values.CLUSTER_TEMPORAL_TLS,
    namespace: stack.namespace,
  };
}

/** Where the stack's processes write notifications: NOTIFICATIONS_OUTBOX_DIR if set, else the stack's data folder. */
export function stackOutboxDirectory(environment: Environment, dataDirectory: string): string {
  return environment.NOTIFICATIONS_OUTBOX_DIR?.trim() || path.join(dataDirectory, 'outbox');
}
