// The partner webhooks' AsyncAPI document against the code that makes the events: one message per type, same shapes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import { parse as parseYaml } from 'yaml';
import type { BookingState } from '../../../src/domain/booking';
import {
  bookingEventBase,
  bookingEventDrafts,
  eventData,
  itineraryOf,
  type PartnerEventDraft,
  partnerEventTypes,
  tripCancelledDraft,
} from '../../../src/domain/partner-events';
import { openApiDocument } from '../../../src/contracts/openapi-document';
import {
  bookingState,
  confirmedState,
  euros,
  firstPassengerId,
  secondPassengerId,
} from '../../support/booking-states';

type Node = Record<string, unknown>;

const documentFile = path.join(__dirname, '../../../asyncapi/asyncapi.yaml');
const document = parseYaml(readFileSync(documentFile, 'utf8')) as Node;
const documentId = 'asyncapi.yaml';
/** The secret the document's examples are signed with, as WebhookHeaders says. */
const exampleSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

function at(pointer: string): unknown {
  if (!pointer.startsWith('#/')) throw new Error(`not a local reference: ${pointer}`);
  return pointer
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node as Node | undefined)?.[key.replaceAll('~1', '/')], document);
}

function resolved(node: unknown): Node {
  let current = node as Node;
  while (typeof current.$ref === 'string') current = at(current.$ref) as Node;
  return current;
}

interface Message {
  key: string;
  message: Node;
  eventType: string;
}

const channel = resolved((document.channels as Node).partnerEndpoint);
const messages: Message[] = Object.entries(channel.messages as Node).map(([key, reference]) => {
  const message = resolved(reference);
  const parts = (resolved(message.payload).allOf as Node[]).map(resolved);
  const typeConst = parts.map((part) => (part.properties as Node | undefined)?.type as Node | undefined);
  return { key, message, eventType: typeConst.find((type) => type?.const)?.const as string };
});

const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv);
ajv.addVocabulary(['x-sensitive', 'components']);
ajv.addSchema({ $id: documentId, components: document.components });

function validatorOf(schema: unknown): ValidateFunction {
  return ajv.compile({ $ref: `${documentId}${(schema as Node).$ref as string}` });
}

const payloadValidators = new Map(
  messages.map(({ eventType, message }) => [eventType, validatorOf(message.payload)]),
);

function validate(eventType: string, payload: unknown): string[] {
  const check = payloadValidators.get(eventType);
  if (!check) return [`no message for ${eventType}`];
  return check(payload) ? [] : (check.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

function envelope(draft: PartnerEventDraft, data: Record<string, unknown>) {
  return { type: draft.type, timestamp: draft.occurredAt, data };
}

const segment = {
  boardingPosition: 0,
  alightingPosition: 2,
  boardingStopCode: 'LIS',
  alightingStopCode: 'POR',
  boardingStop: {
    code: 'LIS',
    name: 'Lisboa Oriente',
    city: 'Lisbon',
    timeZone: 'Europe/Lisbon',
    localTime: '',
  },
  alightingStop: {
    code: 'POR',
    name: 'Porto Campanhã',
    city: 'Porto',
    timeZone: 'Europe/Lisbon',
    localTime: '',
  },
};

/** Snapshots that between them state every booking event: a payment open, a journey, a cancellation, an expiry. */
const snapshots: { name: string; state: BookingState; lastItinerary?: string }[] = [
  {
    name: 'waiting for 3-D Secure after a decline',
    state: bookingState({
      paymentAttempts: [
        {
          attemptNumber: 1,
          attemptedAt: '2026-11-01T09:02:00.000Z',
          outcome: 'DECLINED',
          amount: euros(5000),
          declineReason: 'insufficient_funds',
        },
      ],
      payment: {
        status: 'DECLINED',
        lastAttemptAt: '2026-11-01T09:03:00.000Z',
        action: { status: 'REQUIRES_ACTION', intentId: 'pi_3QyQ8f', nextActionType: 'use_stripe_sdk' },
      },
    }),
  },
  {
    name: 'paid, changed, one passenger aboard, one a no-show, partly refunded, disputed',
    state: confirmedState({
      segment,
      version: 3,
      updatedAt: '2026-11-02T10:00:00.000Z',
      paymentAttempts: [
        {
          attemptNumber: 1,
          attemptedAt: '2026-11-01T09:04:00.000Z',
          outcome: 'APPROVED',
          amount: euros(5000),
          method: 'visa •••• 4242',
        },
      ],
      boardings: [
        {
          passengerId: firstPassengerId,
          boardedAt: '2026-12-01T09:55:00.000Z',
          stopCode: 'LIS',
          actorId: 'driver-1',
        },
      ],
      noShowsRecordedAt: '2026-12-01T10:10:00.000Z',
      amountRefunded: euros(1250),
      paymentIncidents: [
        {
          kind: 'DISPUTE_CREATED',
          eventId: 'evt_1',
          reference: 'dp_1QyQ8f',
          amount: euros(5000),
          reason: 'fraudulent',
          recordedAt: '2026-12-06T10:00:00.000Z',
        },
      ],
    }),
    lastItinerary: itineraryOf(confirmedState({ passengers: confirmedState().passengers.slice(0, 1) })),
  },
  {
    name: 'cancelled and refunded, the refund failed',
    state: confirmedState({
      status: 'CANCELLED',
      cancelledAt: '2026-11-03T10:00:00.000Z',
      cancellationReason: 'customer request',
      amountRefunded: euros(5000),
      updatedAt: '2026-11-03T10:00:00.000Z',
      paymentIncidents: [
        {
          kind: 'REFUND_FAILED',
          eventId: 'evt_2',
          reference: 're_3QyQ8f',
          amount: euros(5000),
          reason: 'expired_or_canceled_card',
          recordedAt: '2026-11-03T11:00:00.000Z',
        },
      ],
    }),
  },
  {
    name: 'expired unpaid',
    state: bookingState({ status: 'EXPIRED', updatedAt: '2026-11-01T09:15:00.000Z' }),
  },
];

describe('the AsyncAPI document', () => {
  it('is AsyncAPI 3.0 and sends from one channel, the partner endpoint', () => {
    expect(document.asyncapi).toBe('3.0.0');
    expect(Object.keys(document.channels as Node)).toEqual(['partnerEndpoint']);
  });

  it('has exactly one message per event type the code knows, and webhook.ping', () => {
    const types = messages.map((message) => message.eventType);
    expect([...types].sort()).toEqual([...partnerEventTypes, 'webhook.ping'].sort());
    for (const { message, eventType } of messages) expect(message.name).toBe(eventType);
  });

  it('sends each message by exactly one operation, a send on the partner endpoint', () => {
    const operations = Object.values(document.operations as Node).map((operation) => operation as Node);
    for (const operation of operations) {
      expect(operation.action).toBe('send');
      expect(operation.channel).toEqual({ $ref: '#/channels/partnerEndpoint' });
    }
    const sent = operations.flatMap((operation) =>
      (operation.messages as Node[]).map((message) => message.$ref as string),
    );
    expect([...sent].sort()).toEqual(
      messages.map(({ key }) => `#/channels/partnerEndpoint/messages/${key}`).sort(),
    );
  });

  it('carries the three Standard Webhooks headers on every message', () => {
    for (const { message } of messages) {
      expect(resolved(message.headers).required).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
    }
  });
});

describe('the payloads the code makes', () => {
  const made = snapshots.flatMap(({ name, state, lastItinerary }) =>
    bookingEventDrafts(state, lastItinerary).map((draft, index) => ({
      name,
      draft,
      payload: envelope(draft, eventData(bookingEventBase(state), index + 1, draft)),
    })),
  );

  it('cover every booking event type (so none below goes unchecked)', () => {
    const bookingTypes = partnerEventTypes.filter((type) => type !== 'trip.cancelled');
    expect([...new Set(made.map(({ draft }) => draft.type))].sort()).toEqual([...bookingTypes].sort());
  });

  it('validate against their messages’ payload schemas', () => {
    const failures = made
      .map(({ name, draft, payload }) => ({ name, type: draft.type, errors: validate(draft.type, payload) }))
      .filter(({ errors }) => errors.length > 0);
    expect(failures).toEqual([]);
  });

  it('validate for trip.cancelled, the trip its subject', () => {
    const draft = tripCancelledDraft({
      reason: 'road closed',
      cancelledAt: '2026-11-30T10:00:00.000Z',
      bookingsAffected: 12,
    });
    const state = bookingState();
    const subject = { trip_id: state.tripId, route_id: state.routeId, departure_time: state.departureTime };
    expect(validate('trip.cancelled', envelope(draft, eventData(subject, 1, draft)))).toEqual([]);
  });

  it('are refused when a required field is missing or of another type', () => {
    const { draft, payload } = made.find(({ draft }) => draft.type === 'passenger.boarded')!;
    const withoutStop: Node = { ...payload, data: { ...payload.data, stop_code: undefined } };
    delete (withoutStop.data as Node).stop_code;
    expect(validate(draft.type, withoutStop)).toEqual(["/data must have required property 'stop_code'"]);
    expect(validate(draft.type, { ...payload, data: { ...payload.data, sequence: '3' } })).toEqual([
      '/data/sequence must be integer',
    ]);
    expect(validate('booking.confirmed', payload)).toContain('/type must be equal to constant');
  });

  it('name passengers by id, seat and fare class only', () => {
    const confirmed = made.find(({ draft }) => draft.type === 'booking.confirmed')!;
    const passengers = confirmed.payload.data.passengers as Node[];
    expect(passengers.map((passenger) => passenger.passenger_id)).toEqual([
      firstPassengerId,
      secondPassengerId,
    ]);
    for (const passenger of passengers) {
      expect(Object.keys(passenger)).toEqual(['passenger_id', 'seat_number', 'fare_class']);
    }
  });
});

describe('the examples', () => {
  const examples = messages.flatMap(({ eventType, message }) =>
    (message.examples as Node[]).map((example) => ({ eventType, message, example })),
  );

  it('are there for every message and validate against its headers and payload schemas', () => {
    expect(new Set(examples.map(({ eventType }) => eventType)).size).toBe(messages.length);
    for (const { eventType, message, example } of examples) {
      expect(validate(eventType, example.payload)).toEqual([]);
      const headers = validatorOf(message.headers);
      expect({ eventType, valid: headers(example.headers), errors: headers.errors }).toEqual({
        eventType,
        valid: true,
        errors: null,
      });
    }
  });

  it('are signed with the example secret, as a receiver would verify them', () => {
    const signer = new Webhook(exampleSecret);
    for (const { example } of examples) {
      const headers = example.headers as Record<string, string>;
      const timestamp = new Date(Number(headers['webhook-timestamp']) * 1000);
      expect(headers['webhook-signature']).toBe(
        signer.sign(headers['webhook-id'], timestamp, JSON.stringify(example.payload)),
      );
    }
  });
});

describe('personal data', () => {
  /** Every property the schemas declare, by schema and name, with its own node (before resolving a $ref). */
  function properties(): { at: string; name: string; node: Node }[] {
    const found: { at: string; name: string; node: Node }[] = [];
    const visit = (node: unknown, at: string): void => {
      if (Array.isArray(node)) {
        node.forEach((item, index) => visit(item, `${at}/${index}`));
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node as Node)) {
        if (key === 'properties') {
          for (const [name, property] of Object.entries(value as Node)) {
            found.push({ at, name, node: property as Node });
          }
        }
        if (key !== 'examples') visit(value, `${at}/${key}`);
      }
    };
    visit((document.components as Node).schemas, '#/components/schemas');
    return found;
  }

  /** Names of the properties the REST contract flags as personal or payment data. */
  function sensitiveInOpenApi(): Set<string> {
    const names = new Set<string>();
    const visit = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node as Node)) {
        if (key === 'properties') {
          for (const [name, property] of Object.entries(value as Node)) {
            if ((property as Node)['x-sensitive'] === true) names.add(name);
          }
        }
        visit(value);
      }
    };
    visit(openApiDocument.components);
    return names;
  }

  it('flags payment.succeeded’s masked method, and nothing else, x-sensitive as the REST contract does', () => {
    const flagged = properties().filter(({ node }) => node['x-sensitive'] === true);
    expect(flagged.map(({ at, name }) => `${at}.${name}`)).toEqual([
      '#/components/schemas/PaymentSucceededData/allOf/1.method',
    ]);
    const restSensitive = sensitiveInOpenApi();
    expect(restSensitive.has('method')).toBe(true);
    const unflagged = properties().filter(
      ({ name, node }) => restSensitive.has(name) && node['x-sensitive'] !== true,
    );
    expect(unflagged.map(({ at, name }) => `${at}.${name}`)).toEqual([]);
  });
});
