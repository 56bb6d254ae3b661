// RecordBooking: writes the workflow's booking snapshot to the read model the fronts read, with the partner events it states.
import type { Knex } from 'knex';
import { writeBookingSnapshot, type SnapshotWrite } from '../db/booking-read-model';
import { releaseBookingDiscountCodes } from '../db/discount-codes';
import { dispatchRecordedEvents, recordBookingEvents, undispatchedEventsOf } from '../db/partner-events';
import { releasesDiscount } from '../domain/discount-codes';
import type { Logger } from '../logger';
import type { WebhookDeliveryStarter } from '../ports/webhooks';
import type { BookingState } from '../domain/booking';
import { createBusinessMetrics, type BusinessMetrics } from '../observability/metrics';
import { bookingTransitionOf } from '../observability/metrics-labels';
import type { FieldCipher } from '../security/field-encryption';
import type { ReadModelActivities } from './interface';

export interface ReadModelActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
  metrics?: BusinessMetrics;
  /** Wakes the partner webhook deliveries of the events a write records; the sweep does it when absent. */
  webhookDeliveries?: WebhookDeliveryStarter;
  logger?: Pick<Logger, 'warn'>;
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
      const { write, events } = await database.transaction(async (transaction) => {
        const snapshotWrite = await writeBookingSnapshot(transaction, snapshot, cipher);
        // A booking that ends without travelling gives its discount code back, with the write that ends it.
        if (
          snapshotWrite.written &&
          snapshot.price.discount !== undefined &&
          releasesDiscount(snapshot.status)
        ) {
          await releaseBookingDiscountCodes(transaction, snapshot.id);
        }
        // An older snapshot than the row's states nothing new; a retried one finds its events recorded.
        return {
          write: snapshotWrite,
          events: snapshotWrite.written ? await recordBookingEvents(transaction, snapshot) : undefined,
        };
      });
      countBookingTransition(metrics, write, snapshot);
      // A snapshot already written is a retry: its first attempt may have died between the commit and the signal.
      const toDispatch =
        events ??
        (dependencies.webhookDeliveries === undefined
          ? undefined
          : await undispatchedEventsOf(database, snapshot.id));
      if (toDispatch !== undefined) {
        await dispatchRecordedEvents(database, dependencies.webhookDeliveries, toDispatch, (error) =>
          dependencies.logger?.warn(
            { err: error, bookingId: snapshot.id },
            'partner events left for the sweep',
          ),
        );
      }
    },
  };
}
