// Typed configuration for every process, read once from the environment at start, failing fast by variable name.
import { taskQueues as bookingTaskQueues } from './workflows/shared';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Environment = Record<string, string | undefined>;

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export interface Config {
  environment: 'development' | 'production' | 'test';
  logLevel: LogLevel;
  http: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    requestTimeoutMs: number;
    corsOrigins: string[];
  };
  grpc: {
    host: string;
    port: number;
  };
  database: {
    url: string;
    poolSize: number;
  };
  temporal: {
    address: string;
    namespace: string;
  };
  worker: {
    /** Task queues this worker process serves; all of them unless narrowed for separate scaling. */
    taskQueues: string[];
    maxConcurrentActivities: number;
    maxConcurrentWorkflowTasks: number;
  };
  booking: {
    holdDurationSeconds: number;
    changeCutoffSeconds: number;
    maxPassengersPerBooking: number;
    maxOpenHoldsPerCustomer: number;
  };
  encryption: {
    /** `keyId:base64key` pairs; old keys stay here after rotation so old rows still decrypt. */
    keyring: string;
    activeKeyId: string;
    blindIndexKey: string;
  };
}

function text(environment: Environment, variable: string, fallback?: string): string {
  const value = environment[variable]?.trim();
  if (value) return value;
  if (fallback !== undefined) return fallback;
  throw new ConfigError(variable, 'is required but not set');
}

function integer(
  environment: Environment,
  variable: string,
  fallback: number,
  bounds: { min: number; max: number },
): number {
  const raw = environment[variable]?.trim();
  if (!raw) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(variable, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < bounds.min || value > bounds.max) {
    throw new ConfigError(variable, `must be between ${bounds.min} and ${bounds.max}, got ${value}`);
  }
  return value;
}

function port(environment: Environment, variable: string, fallback: number): number {
  return integer(environment, variable, fallback, { min: 0, max: 65535 });
}

function oneOf<T extends string>(
  environment: Environment,
  variable: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = text(environment, variable, fallback) as T;
  if (!allowed.includes(value)) throw new ConfigError(variable, `must be one of ${allowed.join(', ')}`);
  return value;
}

function list(environment: Environment, variable: string, fallback: string[]): string[] {
  const raw = environment[variable]?.trim();
  if (!raw) return fallback;
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function databaseUrl(environment: Environment): string {
  const url = text(environment, 'DATABASE_URL');
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError('DATABASE_URL', 'must be a postgres:// URL');
  return url;
}

const allTaskQueues: string[] = Object.values(bookingTaskQueues);

/** Reads the whole configuration; call once in each process's entry point and pass the result down. */
export function loadConfig(environment: Environment = process.env): Config {
  const taskQueues = list(environment, 'WORKER_TASK_QUEUES', allTaskQueues);
  const unknownQueue = taskQueues.find((queue) => !allTaskQueues.includes(queue));
  if (unknownQueue) {
    throw new ConfigError('WORKER_TASK_QUEUES', `names unknown queue "${unknownQueue}"`);
  }
  return {
    environment: oneOf(environment, 'NODE_ENV', ['development', 'production', 'test'], 'development'),
    logLevel: oneOf(environment, 'LOG_LEVEL', logLevels, 'info'),
    http: {
      host: text(environment, 'HTTP_HOST', '0.0.0.0'),
      port: port(environment, 'HTTP_PORT', 8080),
      bodyLimitBytes: integer(environment, 'HTTP_BODY_LIMIT_BYTES', 64 * 1024, {
        min: 1024,
        max: 10 * 1024 * 1024,
      }),
      requestTimeoutMs: integer(environment, 'HTTP_REQUEST_TIMEOUT_MS', 10_000, { min: 100, max: 300_000 }),
      corsOrigins: list(environment, 'CORS_ORIGINS', []),
    },
    grpc: {
      host: text(environment, 'GRPC_HOST', '0.0.0.0'),
      port: port(environment, 'GRPC_PORT', 50051),
    },
    database: {
      url: databaseUrl(environment),
      poolSize: integer(environment, 'DATABASE_POOL_SIZE', 10, { min: 1, max: 200 }),
    },
    temporal: {
      address: text(environment, 'TEMPORAL_ADDRESS', '127.0.0.1:7233'),
      namespace: text(environment, 'TEMPORAL_NAMESPACE', 'default'),
    },
    worker: {
      taskQueues,
      maxConcurrentActivities: integer(environment, 'WORKER_MAX_CONCURRENT_ACTIVITIES', 50, {
        min: 1,
        max: 1000,
      }),
      maxConcurrentWorkflowTasks: integer(environment, 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', 40, {
        min: 1,
        max: 1000,
      }),
    },
    booking: {
      holdDurationSeconds: integer(environment, 'BOOKING_HOLD_SECONDS', 15 * 60, { min: 1, max: 24 * 3600 }),
      changeCutoffSeconds: integer(environment, 'BOOKING_CHANGE_CUTOFF_SECONDS', 3600, {
        min: 0,
        max: 7 * 86400,
      }),
      maxPassengersPerBooking: integer(environment, 'BOOKING_MAX_PASSENGERS', 9, { min: 1, max: 50 }),
      maxOpenHoldsPerCustomer: integer(environment, 'BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER', 5, {
        min: 1,
        max: 1000,
      }),
    },
    encryption: {
      keyring: text(environment, 'ENCRYPTION_KEYS'),
      activeKeyId: text(environment, 'ENCRYPTION_ACTIVE_KEY_ID'),
      blindIndexKey: text(environment, 'BLIND_INDEX_KEY'),
    },
  };
}

export interface StackConfig {
  dataDirectory: string;
  postgresPort: number;
  temporalPort: number;
  temporalUiPort: number;
  httpPort: number;
  grpcPort: number;
  namespace: string;
}

/** Settings of the one-command embedded stack (`npm start`); the processes it runs read `loadConfig`. */
export function loadStackConfig(environment: Environment = process.env, projectRoot: string): StackConfig {
  const dataDirectory = text(environment, 'STACK_DATA_DIR', '.data');
  return {
    dataDirectory: dataDirectory.startsWith('/') ? dataDirectory : `${projectRoot}/${dataDirectory}`,
    postgresPort: port(environment, 'EMBEDDED_POSTGRES_PORT', 54320),
    temporalPort: port(environment, 'TEMPORAL_PORT', 7233),
    temporalUiPort: port(environment, 'TEMPORAL_UI_PORT', 8233),
    httpPort: port(environment, 'HTTP_PORT', 8080),
    grpcPort: port(environment, 'GRPC_PORT', 50051),
    namespace: text(environment, 'TEMPORAL_NAMESPACE', 'default'),
  };
}
