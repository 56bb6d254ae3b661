// Partners' webhook subscriptions: endpoints, their secrets, a test ping and the delivery log; both fronts call it.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { pageWindow, type PageRequest } from '../db/paging';
import {
  deleteEndpoint,
  deliveryListing,
  endpointListing,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  markForRedelivery,
  readDeliveryPage,
  readEndpointForDelivery,
  readEndpointPage,
  rotateEndpointSecret,
  subjectsWithPendingDeliveries,
  updateEndpoint,
  type DeliveryStatus,
  type EndpointAccess,
  type EndpointChanges,
  type WebhookDeliveryRecord,
  type WebhookEndpointRecord,
} from '../db/webhook-endpoints';
import type { Actor } from '../domain/actor';
import { DomainError, notFound, validationFailed, type FieldViolation } from '../domain/errors';
import { validateEndpointUrl, validateEventTypes } from '../domain/partner-events';
import { isStaff } from '../domain/roles';
import { validateId } from '../domain/validation';
import type { WebhookDeliveryStarter, WebhookSender, WebhookSendResult } from '../ports/webhooks';
import type { FieldCipher } from '../security/field-encryption';
import type { Page } from './interface';

export type { WebhookDeliveryStarter, WebhookSender };

/** Live endpoints one partner may have at once. */
export const maximumEndpointsPerPartner = 20;
export const defaultSecretOverlapSeconds = 86_400;
export const maximumSecretOverlapSeconds = 7 * 86_400;
export const maximumDescriptionLength = 500;
export const pingEventType = 'webhook.ping';

export type EndpointScope = 'ALL_BOOKINGS' | 'OWN_BOOKINGS';
export type EndpointStatusName = 'ENABLED' | 'DISABLED';
export type DeliveryStatusName = 'PENDING' | 'DELIVERED' | 'FAILED';
export const deliveryStatusNames: readonly DeliveryStatusName[] = ['PENDING', 'DELIVERED', 'FAILED'];

/** An endpoint as both fronts show it: never its secrets. */
export interface WebhookEndpointView {
  id: string;
  partnerId: string;
  url: string;
  description: string;
  eventTypes: string[];
  scope: EndpointScope;
  status: EndpointStatusName;
  disabledReason: string | null;
  disabledAt: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** Null unless deleted; only operators ever read a deleted endpoint. */
  deletedAt: string | null;
}

/** An endpoint with the secret just made for it: the one answer that ever shows it. */
export interface EndpointWithSecret {
  endpoint: WebhookEndpointView;
  secret: string;
}

export type DeliveryAttemptView = WebhookDeliveryRecord['attempts'][number];

export type WebhookDeliveryView = Omit<WebhookDeliveryRecord, 'status'> & { status: DeliveryStatusName };

export interface PingView {
  outcome: 'DELIVERED' | 'GONE' | 'REFUSED' | 'FAILED';
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** What a front hands over, unchecked: every rule is applied here, the same for REST and gRPC. */
export interface EndpointInput {
  url?: unknown;
  eventTypes?: unknown;
  description?: unknown;
}

export interface EndpointChangesInput extends EndpointInput {
  enabled?: unknown;
}

export interface PartnerWebhookApplication {
  createEndpoint(actor: Actor, input: EndpointInput): Promise<EndpointWithSecret>;
  listEndpoints(actor: Actor, page: PageRequest): Promise<Page<WebhookEndpointView>>;
  getEndpoint(actor: Actor, endpointId: string): Promise<WebhookEndpointView>;
  updateEndpoint(
    actor: Actor,
    endpointId: string,
    changes: EndpointChangesInput,
  ): Promise<WebhookEndpointView>;
  deleteEndpoint(actor: Actor, endpointId: string): Promise<void>;
  /** `overlapSeconds` absent: a day. */
  rotateSecret(
    actor: Actor,
    endpointId: string,
    request: { overlapSeconds?: unknown },
  ): Promise<EndpointWithSecret>;
  pingEndpoint(actor: Actor, endpointId: string): Promise<PingView>;
  listDeliveries(
    actor: Actor,
    endpointId: string,
    request: PageRequest & { status?: unknown },
  ): Promise<Page<WebhookDeliveryView>>;
  getDelivery(actor: Actor, endpointId: string, deliveryId: string): Promise<WebhookDeliveryView>;
  redeliver(actor: Actor, endpointId: string, deliveryId: string): Promise<WebhookDeliveryView>;
}

export interface PartnerWebhookDependencies {
  database: Knex;
  cipher: FieldCipher;
  sender: WebhookSender;
  deliveries: WebhookDeliveryStarter;
  /** WEBHOOK_ALLOW_HTTP: endpoints may be http:// URLs too. */
  allowHttp: boolean;
  now?: () => Date;
}

export function endpointView(record: WebhookEndpointRecord): WebhookEndpointView {
  return {
    id: record.id,
    partnerId: record.partnerId,
    url: record.url,
    description: record.description,
    eventTypes: [...record.eventTypes],
    scope: record.allBookings ? 'ALL_BOOKINGS' : 'OWN_BOOKINGS',
    status: record.status === 'enabled' ? 'ENABLED' : 'DISABLED',
    disabledReason: record.disabledReason,
    disabledAt: record.disabledAt,
    previousSecretExpiresAt: record.previousSecretExpiresAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    deletedAt: record.deletedAt,
  };
}

export function deliveryView(record: WebhookDeliveryRecord): WebhookDeliveryView {
  return { ...record, status: record.status.toUpperCase() as DeliveryStatusName };
}

export function pingView(result: WebhookSendResult): PingView {
  return {
    outcome: result.outcome.toUpperCase() as PingView['outcome'],
    statusCode: 'statusCode' in result && result.statusCode !== undefined ? result.statusCode : null,
    error: 'error' in result ? result.error : null,
    durationMs: result.durationMs,
  };
}

/** `whsec_` and 24 random bytes in base64, as Standard Webhooks writes a secret. */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** Operators (role admin) reach every partner's endpoints; everyone else, staff agents included, only their own. */
export function endpointAccessOf(actor: Actor): EndpointAccess {
  return actor.roles.includes('admin') ? { anyPartner: true } : { partnerId: actor.userId };
}

/** Another partner's endpoint answers exactly as a missing one, so its id tells nothing. */
const endpointNotFound = (endpointId: string) => notFound('Webhook endpoint', endpointId);
const deliveryNotFound = (deliveryId: string) => notFound('Webhook delivery', deliveryId);

/** Runs one field's rule, keeping its violations so that every bad field is named in one answer. */
function checked<T>(violations: FieldViolation[], rule: () => T): T | undefined {
  try {
    return rule();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'VALIDATION_FAILED') {
      violations.push(...error.fieldViolations);
      return undefined;
    }
    throw error;
  }
}

function readDescription(value: unknown): string {
  const invalid = (message: string) => validationFailed([{ field: 'description', message }]);
  if (typeof value !== 'string') throw invalid('must be a string');
  if (value.length > maximumDescriptionLength) {
    throw invalid(`must be at most ${maximumDescriptionLength} characters`);
  }
  if (value.includes('\u0000')) throw invalid('must not contain U+0000');
  return value;
}

function readOverlapSeconds(value: unknown): number {
  if (value === undefined) return defaultSecretOverlapSeconds;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 0 ||
    value > maximumSecretOverlapSeconds
  ) {
    throw validationFailed([
      {
        field: 'overlap_seconds',
        message: `must be a whole number of seconds from 0 to ${maximumSecretOverlapSeconds} (7 days)`,
      },
    ]);
  }
  return value;
}

function readDeliveryStatus(value: unknown): DeliveryStatus | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !(deliveryStatusNames as readonly string[]).includes(value)) {
    throw validationFailed([
      { field: 'status', message: `must be one of ${deliveryStatusNames.join(', ')}` },
    ]);
  }
  return value.toLowerCase() as DeliveryStatus;
}

export function createPartnerWebhookApplication(
  dependencies: PartnerWebhookDependencies,
): PartnerWebhookApplication {
  const { database, cipher, sender, deliveries } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const urlOptions = { allowHttp: dependencies.allowHttp };

  async function ownedEndpoint(actor: Actor, endpointId: string): Promise<WebhookEndpointRecord> {
    const id = validateId(endpointId, 'endpoint_id');
    const endpoint = await findEndpoint(database, endpointAccessOf(actor), id);
    if (endpoint === undefined) throw endpointNotFound(id);
    return endpoint;
  }

  async function ownedDelivery(
    actor: Actor,
    endpointId: string,
    deliveryId: string,
  ): Promise<{ endpoint: WebhookEndpointRecord; delivery: WebhookDeliveryRecord }> {
    const endpoint = await ownedEndpoint(actor, endpointId);
    const id = validateId(deliveryId, 'delivery_id');
    const delivery = await findDelivery(database, endpoint.id, id);
    if (delivery === undefined) throw deliveryNotFound(id);
    return { endpoint, delivery };
  }

  /** A failure to reach Temporal leaves the change saved; the caller is told to repeat the request. */
  async function wake(targets: { endpointId: string; subjectId: string }[]): Promise<void> {
    try {
      await Promise.all(targets.map((target) => deliveries.nudge(target)));
    } catch (error) {
      throw new DomainError(
        'UNAVAILABLE',
        'The change is saved, but its deliveries could not be woken; send the same request again',
        { details: { retryAfterSeconds: 1 }, cause: error },
      );
    }
  }

  return {
    async createEndpoint(actor, input) {
      const violations: FieldViolation[] = [];
      const url = checked(violations, () => validateEndpointUrl(input.url, urlOptions));
      const eventTypes = checked(violations, () => validateEventTypes(input.eventTypes));
      const description = checked(violations, () =>
        input.description === undefined ? '' : readDescription(input.description),
      );
      if (violations.length > 0) throw validationFailed(violations);
      const secret = newEndpointSecret();
      const created = await insertEndpoint(
        database,
        cipher,
        {
          id: randomUUID(),
          partnerId: actor.userId,
          url: url!,
          description: description!,
          eventTypes: eventTypes!,
          // Staff endpoints hear every booking's events; a partner's only those of the bookings it made.
          allBookings: isStaff(actor),
          secret,
        },
        maximumEndpointsPerPartner,
      );
      if (created === undefined) {
        throw validationFailed([
          {
            field: '',
            message: `a partner may have at most ${maximumEndpointsPerPartner} webhook endpoints; delete one first`,
          },
        ]);
      }
      return { endpoint: endpointView(created), secret };
    },

    async listEndpoints(actor, request) {
      const access = endpointAccessOf(actor);
      const window = pageWindow(endpointListing, request, access);
      const page = await readEndpointPage(database, access, window);
      return {
        items: page.rows.map(endpointView),
        ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }),
      };
    },

    async getEndpoint(actor, endpointId) {
      return endpointView(await ownedEndpoint(actor, endpointId));
    },

    async updateEndpoint(actor, endpointId, input) {
      const id = validateId(endpointId, 'endpoint_id');
      const violations: FieldViolation[] = [];
      const changes: EndpointChanges = {};
      if (input.url !== undefined) {
        const url = checked(violations, () => validateEndpointUrl(input.url, urlOptions));
        if (url !== undefined) changes.url = url;
      }
      if (input.eventTypes !== undefined) {
        const eventTypes = checked(violations, () => validateEventTypes(input.eventTypes));
        if (eventTypes !== undefined) changes.eventTypes = eventTypes;
      }
      if (input.description !== undefined) {
        const description = checked(violations, () => readDescription(input.description));
        if (description !== undefined) changes.description = description;
      }
      if (input.enabled !== undefined) {
        if (typeof input.enabled === 'boolean') changes.enabled = input.enabled;
        else violations.push({ field: 'enabled', message: 'must be true or false' });
      }
      if (violations.length > 0) throw validationFailed(violations);
      const updated = await updateEndpoint(database, endpointAccessOf(actor), id, changes, now());
      if (updated === undefined) throw endpointNotFound(id);
      if (changes.enabled === true) {
        // Deliveries waited while it was off: each subject's workflow takes them up again, in order. Asked again
        // of an enabled endpoint it wakes them again, so a request whose waking failed can simply be repeated.
        const subjects = await subjectsWithPendingDeliveries(database, id);
        await wake(subjects.map((subjectId) => ({ endpointId: id, subjectId })));
      }
      return endpointView(updated.after);
    },

    async deleteEndpoint(actor, endpointId) {
      const id = validateId(endpointId, 'endpoint_id');
      if (!(await deleteEndpoint(database, endpointAccessOf(actor), id, now()))) throw endpointNotFound(id);
    },

    async rotateSecret(actor, endpointId, request) {
      const id = validateId(endpointId, 'endpoint_id');
      const overlapSeconds = readOverlapSeconds(request.overlapSeconds);
      const secret = newEndpointSecret();
      const rotated = await rotateEndpointSecret(database, cipher, endpointAccessOf(actor), id, {
        secret,
        overlapSeconds,
        now: now(),
      });
      if (rotated === undefined) throw endpointNotFound(id);
      return { endpoint: endpointView(rotated), secret };
    },

    async pingEndpoint(actor, endpointId) {
      const endpoint = await ownedEndpoint(actor, endpointId);
      const at = now();
      const target = await readEndpointForDelivery(database, cipher, endpoint.id, at);
      if (target === undefined || target.deleted) throw endpointNotFound(endpoint.id);
      const messageId = randomUUID();
      const result = await sender.send({
        url: target.url,
        messageId,
        timestamp: at,
        payload: JSON.stringify({
          type: pingEventType,
          timestamp: at.toISOString(),
          data: { endpoint_id: endpoint.id },
        }),
        secrets: target.secrets,
      });
      return pingView(result);
    },

    async listDeliveries(actor, endpointId, request) {
      const endpoint = await ownedEndpoint(actor, endpointId);
      const status = readDeliveryStatus(request.status);
      const window = pageWindow(deliveryListing, request, { endpoint: endpoint.id, status: status ?? null });
      const page = await readDeliveryPage(database, endpoint.id, status, window);
      return {
        items: page.rows.map(deliveryView),
        ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }),
      };
    },

    async getDelivery(actor, endpointId, deliveryId) {
      return deliveryView((await ownedDelivery(actor, endpointId, deliveryId)).delivery);
    },

    async redeliver(actor, endpointId, deliveryId) {
      const { endpoint, delivery } = await ownedDelivery(actor, endpointId, deliveryId);
      // The log of a deleted endpoint stays readable for operators, but nothing is sent to it any more.
      if (endpoint.deletedAt !== null) throw endpointNotFound(endpoint.id);
      const marked = await markForRedelivery(database, delivery.id);
      if (marked === undefined) throw deliveryNotFound(delivery.id);
      await wake([marked]);
      const current = await findDelivery(database, endpoint.id, delivery.id);
      if (current === undefined) throw deliveryNotFound(delivery.id);
      return deliveryView(current);
    },
  };
}
