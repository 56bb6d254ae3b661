// Starts the bookings whose id a create gave out but whose workflow start never reached Temporal.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../config';
import { FieldDecryptionError, type FieldCipher } from '../security/field-encryption';
import { createBookingStarts, type StartOutcome } from './booking-starts';
import { openHoldClaimsFromConfig } from '../db/booking-hold-claims';

/** Starts sent per pass: a backlog after an outage drains over a few passes instead of in one burst. */
const startsPerPass = 100;

export interface StartReconciler {
  /** One pass: starts what it finds unstarted; how many it started or found ended. */
  reconcile(): Promise<number>;
}

export function createStartReconciler(dependencies: {
  config: Pick<Config, 'booking' | 'idempotency'>;
  database: Knex;
  temporal: Client;
  cipher: FieldCipher;
  /**
   * A start this process cannot decrypt (its key left ENCRYPTION_KEYS): it stays promised for a process that can,
   * and the pass goes on, so one such row never holds back the starts behind it.
   */
  onUnreadable: (bookingId: string, error: FieldDecryptionError) => void;
  now?: () => Date;
}): StartReconciler {
  const { config, database, temporal, cipher, onUnreadable } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const claims = openHoldClaimsFromConfig(config, database, { now });
  const starts = createBookingStarts({ temporal, cipher, claims });
  // A younger claim's own create may still be sending its start; sending it again would be harmless, but idle.
  const createsInFlightMs = config.booking.createAnswerTimeoutMs + 1000;

  async function reconcile(): Promise<number> {
    const lost = await claims.unstarted(new Date(now().getTime() - createsInFlightMs), startsPerPass);
    let settled = 0;
    for (const { bookingId, sealedStart } of lost) {
      let outcome: StartOutcome;
      try {
        outcome = await starts.ensureStarted(bookingId, sealedStart);
      } catch (error) {
        // Any other error (Temporal unreachable) ends the pass; the next one tries again.
        if (!(error instanceof FieldDecryptionError)) throw error;
        onUnreadable(bookingId, error);
        continue;
      }
      // Listed without a row, and a workflow that has ended writes no more rows: it ended without a booking.
      if (outcome === 'ended') await claims.release(bookingId);
      if (outcome !== 'withdrawn') settled += 1;
    }
    return settled;
  }

  return { reconcile };
}

/** Runs a pass every `intervalMs` until the returned function is called; a failed pass is reported, not fatal. */
export function scheduleStartReconciliation(
  reconciler: StartReconciler,
  intervalMs: number,
  onError: (error: unknown) => void,
): () => void {
  let passing = false;
  const timer = setInterval(() => {
    // A pass still going (a backlog, a slow Temporal) is not joined by another.
    if (passing) return;
    passing = true;
    reconciler
      .reconcile()
      .catch(onError)
      .finally(() => {
        passing = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
