// One path for the processor's events, from a webhook or the reconciliation: recorded once, then applied once.
import type { PaymentEvent, PaymentEventKind } from '../domain/payment-events';

/** How a recorded event was dealt with (the table's outcome). */
export type SettledOutcome = 'applied' | 'ignored' | 'no_booking' | 'no_workflow';
/** What one delivery came to: `duplicate` for an event dealt with before, which is then left alone. */
export type IntakeOutcome = SettledOutcome | 'duplicate';
export type IntakeSource = 'webhook' | 'reconciliation';

export interface PaymentEventIntakeDependencies {
  /**
   * Records the event unless its id has a row; says whether it was dealt with already (its outcome), and whether
   * this delivery may apply it (`claimed`: no other delivery is applying it right now).
   */
  record(
    event: PaymentEvent,
    source: IntakeSource,
  ): Promise<{ outcome: SettledOutcome | undefined; claimed: boolean }>;
  /** Marks the event dealt with. */
  settle(eventId: string, outcome: SettledOutcome): Promise<void>;
  /** Gives up this delivery's claim after a failure, for the next delivery to apply the event. */
  release(eventId: string): Promise<void>;
  /**
   * Hands the event to the booking's workflow: `no_workflow` when there is no such workflow running. Throws when
   * it cannot tell (Temporal unreachable): the event then stays recorded and unapplied for a later delivery.
   */
  deliver(event: PaymentEvent & { bookingId: string }): Promise<'applied' | 'no_workflow'>;
  count(source: IntakeSource, kind: PaymentEventKind, outcome: IntakeOutcome): void;
  /** Hears the outcomes an operator may have to look into. */
  warn(details: Record<string, unknown>, message: string): void;
}

export type PaymentEventIntake = (event: PaymentEvent, source: IntakeSource) => Promise<IntakeOutcome>;

export function createPaymentEventIntake(dependencies: PaymentEventIntakeDependencies): PaymentEventIntake {
  async function settled(event: PaymentEvent): Promise<SettledOutcome> {
    if (event.kind === 'ignored') return 'ignored';
    const { bookingId } = event;
    if (bookingId === undefined) return 'no_booking';
    return dependencies.deliver({ ...event, bookingId });
  }

  return async (event, source) => {
    // Recorded before anything is applied or answered: a delivery answered 2xx is never lost.
    const recorded = await dependencies.record(event, source);
    // Dealt with before, or being applied by a delivery that came a moment earlier: its failure would be retried.
    if (recorded.outcome !== undefined || !recorded.claimed) {
      dependencies.count(source, event.kind, 'duplicate');
      return 'duplicate';
    }
    let outcome: SettledOutcome;
    try {
      outcome = await settled(event);
      await dependencies.settle(event.eventId, outcome);
    } catch (error) {
      await dependencies.release(event.eventId).catch(() => undefined);
      throw error;
    }
    dependencies.count(source, event.kind, outcome);
    if (outcome === 'no_booking' || outcome === 'no_workflow') {
      dependencies.warn(
        {
          eventId: event.eventId,
          type: event.type,
          bookingId: event.bookingId,
          ...('intentId' in event ? { intentId: event.intentId } : {}),
          source,
          outcome,
        },
        outcome === 'no_booking'
          ? 'a payment event names no booking; recorded, nothing applied'
          : 'a payment event names a booking whose workflow is not running; recorded, nothing applied',
      );
    }
    return outcome;
  };
}
