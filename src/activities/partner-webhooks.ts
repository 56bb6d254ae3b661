// NextWebhookDelivery and DeliverWebhook: one Standard Webhooks attempt at a time, each written to the delivery log.
import type { Knex } from 'knex';
import { deliveryToSend, disableEndpoint, nextPendingDelivery, recordAttempt } from '../db/partner-events';
import { nextAttemptDelayMs } from '../domain/webhook-retries';
import type { Logger } from '../logger';
import {
  createPartnerWebhookMetrics,
  type PartnerWebhookMetrics,
} from '../observability/partner-webhook-metrics';
import type { WebhookSendResult, WebhookSender } from '../ports/webhooks';
import type { FieldCipher } from '../security/field-encryption';
import type { DeliverWebhookResult, PartnerWebhookActivities } from './interface';

export interface PartnerWebhookActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
  webhookSender: WebhookSender;
  partnerWebhookMetrics?: PartnerWebhookMetrics;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

/** The envelope every partner receives: what happened, when, and the event's data. */
export function webhookPayload(event: {
  type: string;
  occurredAt: Date;
  data: Record<string, unknown>;
}): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data: event.data });
}

function attemptError(result: WebhookSendResult): string | undefined {
  return result.outcome === 'failed' || result.outcome === 'refused' ? result.error : undefined;
}

function attemptStatusCode(result: WebhookSendResult): number | undefined {
  return 'statusCode' in result ? result.statusCode : undefined;
}

export function createPartnerWebhookActivities(
  dependencies: PartnerWebhookActivityDependencies,
): PartnerWebhookActivities {
  const { database, cipher, webhookSender } = dependencies;
  const metrics = dependencies.partnerWebhookMetrics ?? createPartnerWebhookMetrics();

  async function stopEndpoint(
    endpointId: string,
    reason: 'gone' | 'exhausted',
    detail: string,
  ): Promise<DeliverWebhookResult> {
    if (await disableEndpoint(database, endpointId, detail)) {
      metrics.endpointsDisabled.inc({ reason });
      // The operators' signal (with the counter's alert); the partner reads it on the endpoint and its log.
      dependencies.logger?.error({ endpointId, reason, detail }, 'a partner webhook endpoint was disabled');
    }
    return { outcome: 'endpoint_stopped', because: reason };
  }

  return {
    NextWebhookDelivery: (target) => nextPendingDelivery(database, target),

    async DeliverWebhook({ deliveryId, roundAttempts, retryScheduleSeconds }) {
      const delivery = await deliveryToSend(database, cipher, deliveryId);
      if (delivery === undefined || delivery.status !== 'pending') return { outcome: 'settled' };
      if (delivery.endpointStop !== undefined) {
        return { outcome: 'endpoint_stopped', because: delivery.endpointStop };
      }
      const attemptedAt = new Date();
      const result = await webhookSender.send({
        url: delivery.url,
        messageId: delivery.messageId,
        timestamp: attemptedAt,
        payload: webhookPayload({
          type: delivery.eventType,
          occurredAt: delivery.occurredAt,
          data: delivery.data,
        }),
        secrets: delivery.secrets,
      });
      metrics.attempts.inc({ endpoint: delivery.endpointId, outcome: result.outcome });
      const attempt = {
        deliveryId,
        attempt: delivery.attempts + 1,
        attemptedAt,
        statusCode: attemptStatusCode(result),
        error: attemptError(result),
        durationMs: result.durationMs,
      };
      if (result.outcome === 'delivered') {
        await recordAttempt(database, { ...attempt, status: 'delivered' });
        metrics.deliveryLatency.observe(
          { endpoint: delivery.endpointId },
          (Date.now() - delivery.recordedAt.getTime()) / 1000,
        );
        return { outcome: 'delivered' };
      }
      if (result.outcome === 'gone') {
        await recordAttempt(database, { ...attempt, status: 'failed' });
        return stopEndpoint(delivery.endpointId, 'gone', 'the endpoint answered 410 Gone');
      }
      const delayMs = nextAttemptDelayMs({
        attemptsMade: roundAttempts + 1,
        scheduleSeconds: retryScheduleSeconds,
        retryAfterSeconds: result.outcome === 'failed' ? result.retryAfterSeconds : undefined,
        random: Math.random,
      });
      if (delayMs === undefined) {
        await recordAttempt(database, { ...attempt, status: 'failed' });
        return stopEndpoint(
          delivery.endpointId,
          'exhausted',
          `every attempt of the retry schedule failed (last: ${attempt.error ?? `HTTP ${attempt.statusCode}`})`,
        );
      }
      await recordAttempt(database, {
        ...attempt,
        status: 'pending',
        nextAttemptAt: new Date(attemptedAt.getTime() + delayMs),
      });
      return { outcome: 'retry', delayMs };
    },
  };
}
