// The workflow's one way to wait for a lifecycle deadline: a durable timer that a change of status can overtake.
import { condition } from '@temporalio/workflow';
import type { Timestamp } from '../domain/booking';
import { timestampMs } from '../domain/time';

function millisecondsUntil(timestamp: Timestamp): number {
  // A zero timeout would not start a timer; one millisecond fires at once and keeps the loop simple.
  return Math.max(1, timestampMs(timestamp) - Date.now());
}

/**
 * Waits while `waiting()` holds. Each time `deadline()` passes first, `atDeadline` runs; it may find that the
 * deadline has not really come (a payment won the race, the deadline moved), so the wait goes on until
 * `waiting()` turns false.
 */
export async function waitForDeadline(
  waiting: () => boolean,
  deadline: () => Timestamp,
  atDeadline: () => Promise<void>,
): Promise<void> {
  while (waiting()) {
    const overtaken = await condition(() => !waiting(), millisecondsUntil(deadline()));
    if (!overtaken) await atDeadline();
  }
}
