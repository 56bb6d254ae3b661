// Readiness of the parts every request needs: PostgreSQL and the Temporal frontend.
import type { Knex } from 'knex';
import type { Connection } from '@temporalio/client';
import { pingDatabase } from '../db/connection';

export type DependencyState = 'ok' | 'unavailable';

export interface Readiness {
  ready: boolean;
  checks: { postgres: DependencyState; temporal: DependencyState };
}

const checkTimeoutMs = 2000;

function withTimeout<T>(work: Promise<T>, milliseconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), milliseconds);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function stateOf(check: () => Promise<unknown>): Promise<DependencyState> {
  try {
    await withTimeout(check(), checkTimeoutMs);
    return 'ok';
  } catch {
    return 'unavailable';
  }
}

export function createReadinessCheck(dependencies: { database: Knex; temporal: Connection }) {
  return async function checkReadiness(): Promise<Readiness> {
    const [postgres, temporal] = await Promise.all([
      stateOf(() => pingDatabase(dependencies.database)),
      stateOf(() =>
        dependencies.temporal.withDeadline(Date.now() + checkTimeoutMs, () =>
          dependencies.temporal.healthService.check({}),
        ),
      ),
    ]);
    return { ready: postgres === 'ok' && temporal === 'ok', checks: { postgres, temporal } };
  };
}

export type ReadinessCheck = ReturnType<typeof createReadinessCheck>;
