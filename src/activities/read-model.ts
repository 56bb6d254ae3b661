// RecordBooking: writes the workflow's booking snapshot to the read model the fronts read (db/booking-read-model).
import type { Knex } from 'knex';
import { writeBookingSnapshot, type SnapshotWrite } from '../db/booking-read-model';
import type { BookingState } from '../domain/booking';
import { createBusinessMetrics, type BusinessMetrics } from '../observability/metrics';
import { bookingTransitionOf } from '../observability/metrics-labels';
import type { FieldCipher } from '../security/field-encryption';
import type { ReadModelActivities } from './interface';

export interface ReadModelActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
  metrics?: BusinessMetrics;
}

/**
 * Counts the lifecycle transition a committed write made: once, because a retried write of the same version
 * finds the row already at it and an older snapshot writes nothing.
 */
export function countBookingTransition(
  metrics: BusinessMetrics,
  write: SnapshotWrite,
  snapshot: BookingState,
): void {
  if (!write.written) return;
  const transition = bookingTransitionOf(write.previous, snapshot);
  if (transition !== undefined) metrics.bookingTransition(transition);
}

export function createReadModelActivities(dependencies: ReadModelActivityDependencies): ReadModelActivities {
  const { database, cipher } = dependencies;
  const metrics = dependencies.metrics ?? createBusinessMetrics();
  return {
    async RecordBooking(snapshot: BookingState): Promise<void> {
      const write = await database.transaction((transaction) =>
        writeBookingSnapshot(transaction, snapshot, cipher),
      );
      countBookingTransition(metrics, write, snapshot);
    },
  };
}
