// Wakes the delivery workflows of partner events whose writer committed them but stopped before it could.
import type { Knex } from 'knex';
import { markEventsDispatched, undispatchedEvents } from '../db/partner-events';
import type { WebhookDeliveryStarter } from '../ports/webhooks';

/** Events younger than this may still be dispatched by the write that recorded them. */
const writersInFlightSeconds = 30;
/** A backlog after an outage drains over a few passes instead of in one burst. */
const eventsPerPass = 500;

export interface PartnerEventSweep {
  /** One pass: how many events it dispatched. */
  reconcile(): Promise<number>;
}

export function createPartnerEventSweep(dependencies: {
  database: Knex;
  webhookDeliveries: WebhookDeliveryStarter;
  onSwept?: (events: number) => void;
}): PartnerEventSweep {
  const { database, webhookDeliveries } = dependencies;
  return {
    async reconcile() {
      const found = await undispatchedEvents(database, writersInFlightSeconds, eventsPerPass);
      if (found.eventIds.length === 0) return 0;
      // A nudge is idempotent: a workflow told twice reads the same pending deliveries once.
      await Promise.all(found.targets.map((target) => webhookDeliveries.nudge(target)));
      await markEventsDispatched(database, found.eventIds);
      dependencies.onSwept?.(found.eventIds.length);
      return found.eventIds.length;
    },
  };
}
