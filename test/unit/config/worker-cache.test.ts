// The worker's workflow cache and local activity slots come from configuration, sized from the heap by default.
import { getHeapStatistics } from 'node:v8';
import { ConfigError, defaultMaxCachedWorkflows, loadConfig } from '../../../src/config';

const minimalEnvironment = {
  DATABASE_URL: 'postgres://user:password@127.0.0.1:5432/bookings',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: Buffer.alloc(32, 2).toString('base64'),
  GRPC_INSECURE: 'true',
};

function variableRefused(environment: Record<string, string>): string {
  try {
    loadConfig({ ...minimalEnvironment, ...environment });
  } catch (error) {
    if (error instanceof ConfigError) return error.variable;
    throw error;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('defaultMaxCachedWorkflows', () => {
  it('spends a quarter of the heap limit in MiB, from 100 to 1,000 bookings', () => {
    expect(defaultMaxCachedWorkflows(2048, 40)).toBe(512);
    expect(defaultMaxCachedWorkflows(256, 40)).toBe(100);
    expect(defaultMaxCachedWorkflows(16_384, 40)).toBe(1000);
  });

  it('is never below the workflow task slots', () => {
    expect(defaultMaxCachedWorkflows(256, 300)).toBe(300);
  });
});

describe('worker cache configuration', () => {
  it('caches a number of open bookings derived from this process heap limit by default', () => {
    const config = loadConfig(minimalEnvironment);
    const heapLimitMiB = getHeapStatistics().heap_size_limit / 2 ** 20;
    expect(config.worker.maxCachedWorkflows).toBe(defaultMaxCachedWorkflows(heapLimitMiB, 40));
    expect(config.worker.maxConcurrentLocalActivities).toBe(50);
  });

  it('takes WORKER_MAX_CACHED_WORKFLOWS and WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES as given; 0 caches none', () => {
    const config = loadConfig({
      ...minimalEnvironment,
      WORKER_MAX_CACHED_WORKFLOWS: '250',
      WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '20',
    });
    expect(config.worker.maxCachedWorkflows).toBe(250);
    expect(config.worker.maxConcurrentLocalActivities).toBe(20);
    expect(
      loadConfig({ ...minimalEnvironment, WORKER_MAX_CACHED_WORKFLOWS: '0' }).worker.maxCachedWorkflows,
    ).toBe(0);
  });

  it('refuses a cache smaller than the workflow task slots, naming the variable', () => {
    expect(variableRefused({ WORKER_MAX_CACHED_WORKFLOWS: '10' })).toBe('WORKER_MAX_CACHED_WORKFLOWS');
    expect(variableRefused({ WORKER_MAX_CACHED_WORKFLOWS: '-1' })).toBe('WORKER_MAX_CACHED_WORKFLOWS');
  });

  it('refuses a single workflow task slot while workflows are cached, as the SDK would change it', () => {
    expect(variableRefused({ WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '1' })).toBe(
      'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
    );
    expect(
      loadConfig({
        ...minimalEnvironment,
        WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '1',
        WORKER_MAX_CACHED_WORKFLOWS: '0',
      }).worker.maxConcurrentWorkflowTasks,
    ).toBe(1);
  });
});
