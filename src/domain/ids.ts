// Deterministic idempotency keys for the saga's activities: the same step of the same booking always gets the same key.
import { isUuid } from './validation';

export const activitySteps = [
  'reserve-seats',
  'confirm-seats',
  'release-seats',
  'process-payment',
  'cancel-payment',
  'refund-payment',
  'send-email',
  'send-sms',
] as const;
export type ActivityStep = (typeof activitySteps)[number];

const revisionSlugPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * `<bookingId>:<step>:<revision>`. The revision tells apart repeated uses of one step within a booking: the
 * booking version for seat changes, the attempt number for payments, an event name (`confirmed`,
 * `cancelled`) for notifications. A retried activity reuses its key, so the port can deduplicate it.
 */
export function activityKey(bookingId: string, step: ActivityStep, revision: number | string): string {
  if (!isUuid(bookingId)) throw new TypeError('activityKey needs a booking UUID');
  if (!(activitySteps as readonly string[]).includes(step))
    throw new TypeError(`Unknown activity step ${step}`);
  const validRevision =
    typeof revision === 'number'
      ? Number.isSafeInteger(revision) && revision >= 0
      : revisionSlugPattern.test(revision);
  if (!validRevision) {
    throw new TypeError('An activity key revision is a non-negative integer or a lowercase slug');
  }
  return `${bookingId.toLowerCase()}:${step}:${revision}`;
}
