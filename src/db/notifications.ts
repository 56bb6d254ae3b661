// The notifications table: one row per idempotency key, locked while its message is sent, then SENT or FAILED.
import type { Knex } from 'knex';

export interface NotificationRecord {
  bookingId: string;
  channel: 'EMAIL' | 'SMS';
  /** Encrypted by the caller, as is the body. */
  recipient: string;
  template: string;
  subject: string | null;
  body: string;
  idempotencyKey: string;
}

/**
 * Inserts the key's row, or on a retry finds it: the no-op update of the existing row locks it until the
 * transaction ends, as FOR UPDATE would, and returns it.
 */
export async function claimNotification(
  transaction: Knex.Transaction,
  notification: NotificationRecord,
): Promise<{ id: string; status: string }> {
  const [row]: { id: string; status: string }[] = await transaction('notifications')
    .insert({
      booking_id: notification.bookingId,
      channel: notification.channel,
      recipient: notification.recipient,
      template: notification.template,
      subject: notification.subject,
      body: notification.body,
      idempotency_key: notification.idempotencyKey,
    })
    .onConflict('idempotency_key')
    .merge(['idempotency_key'])
    .returning(['id', 'status']);
  return row;
}

/** A failed delivery: FAILED when no retry can deliver it, PENDING otherwise, with the provider's error. */
export async function recordNotificationFailure(
  transaction: Knex.Transaction,
  id: string,
  failure: { permanent: boolean; error: string },
): Promise<void> {
  await transaction('notifications')
    .where({ id })
    .update({
      status: failure.permanent ? 'FAILED' : 'PENDING',
      attempts: transaction.raw('attempts + 1'),
      last_error: failure.error,
    });
}

export async function recordNotificationSent(transaction: Knex.Transaction, id: string): Promise<void> {
  await transaction('notifications')
    .where({ id })
    .update({
      status: 'SENT',
      sent_at: transaction.fn.now(),
      attempts: transaction.raw('attempts + 1'),
      last_error: null,
    });
}
