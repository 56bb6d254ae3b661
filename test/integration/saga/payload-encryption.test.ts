// A whole booking through the real saga leaves no personal data in Temporal's history; the application reads it back.
import { expect } from '@jest/globals';
import type { Payload } from '@temporalio/common';
import { historyToJSON, JSONToPayload } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { encryptedEncoding } from '../../../src/security/temporal-payload-codec';
import { bookingWorkflowId } from '../../../src/workflows/shared';
import { useSagaTestBed } from '../../support/saga';
import { domainErrorOf } from '../../support/outcomes';

jest.setTimeout(90_000);

/** Distinctive values, so a match anywhere in the history cannot be a coincidence. */
const personalData = {
  firstName: 'Leopoldina',
  lastName: 'Vasconcelos-Brandao',
  email: 'leopoldina.vb@privacy-test.example',
  phone: '+351966123789',
  companionFirstName: 'Bartolomeu',
  companionLastName: 'Quintanilha',
  companionEmail: 'bartolomeu.q@privacy-test.example',
  updatedLastName: 'Albuquerque-Sampaio',
  updatedPhone: '+351937654321',
  contactEmail: 'family.contact@privacy-test.example',
  contactPhone: '+351211987654',
  declinedToken: 'tok_chargeDeclined',
  paymentToken: 'tok_visa',
};

const testBed = useSagaTestBed({ seatCount: 8 });

/** The history as the Temporal server stores it: raw gRPC, no data converter in between. */
async function storedHistory(workflowId: string): Promise<temporal.api.history.v1.IHistory> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await testBed.saga.client.workflowService.getWorkflowExecutionHistory({
      namespace: testBed.saga.config.temporal.namespace,
      execution: { workflowId },
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken !== undefined);
  return { events };
}

interface FoundPayload {
  /** Where in the event it sits, e.g. `workflowExecutionStartedEventAttributes.input.payloads.0`. */
  path: string;
  payload: { metadata?: Record<string, string>; data?: string };
}

/** Every `{ metadata, data }` object of the history JSON, with its path. */
function payloadsIn(value: unknown, path = ''): FoundPayload[] {
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => payloadsIn(item, `${path}.${index}`));
  const record = value as Record<string, unknown>;
  const here = 'metadata' in record ? [{ path, payload: record as FoundPayload['payload'] }] : [];
  return [
    ...here,
    ...Object.entries(record).flatMap(([key, child]) => payloadsIn(child, path ? `${path}.${key}` : key)),
  ];
}

const fromBase64 = (text: string | undefined) => Buffer.from(text ?? '', 'base64').toString('latin1');

test('a booking, changed, declined, paid: every payload of ours in its history is ciphertext, no personal data anywhere, and the application reads plaintext', async () => {
  const created = await testBed.saga.application.createBooking(testBed.customer, {
    tripId: testBed.trip.tripId,
    passengers: [
      {
        firstName: personalData.firstName,
        lastName: personalData.lastName,
        email: personalData.email,
        phone: personalData.phone,
        seatNumber: testBed.trip.seatNumbers[0],
        fareClass: 'STANDARD',
      },
    ],
    contactEmail: personalData.contactEmail,
    contactPhone: personalData.contactPhone,
  });
  await testBed.saga.application.updateBooking(testBed.customer, created.id, {
    addPassengers: [
      {
        firstName: personalData.companionFirstName,
        lastName: personalData.companionLastName,
        email: personalData.companionEmail,
        seatNumber: testBed.trip.seatNumbers[1],
        fareClass: 'STANDARD',
      },
    ],
    passengerUpdates: [
      {
        passengerId: created.passengers[0].id,
        lastName: personalData.updatedLastName,
        phone: personalData.updatedPhone,
      },
    ],
  });
  const declined = await domainErrorOf(
    testBed.saga.application.confirmPayment(testBed.customer, created.id, {
      paymentToken: personalData.declinedToken,
    }),
  );
  const confirmed = await testBed.saga.application.confirmPayment(testBed.customer, created.id, {
    paymentToken: personalData.paymentToken,
  });

  expect(declined?.code).toBe('PAYMENT_DECLINED');
  expect(confirmed.status).toBe('CONFIRMED');
  const read = await testBed.saga.application.getBooking(testBed.customer, created.id);
  expect(read.passengers.map((passenger) => [passenger.firstName, passenger.lastName])).toEqual(
    expect.arrayContaining([
      [personalData.firstName, personalData.updatedLastName],
      [personalData.companionFirstName, personalData.companionLastName],
    ]),
  );
  expect(read.contactEmail).toBe(personalData.contactEmail);

  const history = await storedHistory(bookingWorkflowId(created.id));
  const json = historyToJSON(history);
  const payloads = payloadsIn(JSON.parse(json));
  const searchAttributes = payloads.filter(({ path }) => path.includes('searchAttributes'));
  const dataPayloads = payloads.filter(({ path }) => !path.includes('searchAttributes'));
  const decodedText = payloads
    .map(({ payload }) => [
      fromBase64(payload.data),
      ...Object.values(payload.metadata ?? {}).map((value) => fromBase64(value)),
    ])
    .flat()
    .join('\n');

  expect(dataPayloads.length).toBeGreaterThan(10);
  expect(searchAttributes.length).toBeGreaterThan(0);
  const unencrypted = dataPayloads.filter(
    ({ payload }) => fromBase64(payload.metadata?.encoding) !== encryptedEncoding,
  );
  // The SDK writes three kinds of payload itself, outside the data converter: patch markers, the bookkeeping of
  // a local activity's marker (its result is a payload of ours, and encrypted), and the trace context header.
  // They pass only with exactly their own fields, so no application data can ride in them.
  const unexpected = unencrypted
    .filter(({ path, payload }) => {
      const fields = Object.keys(JSON.parse(fromBase64(payload.data)) as object).sort();
      if (path.endsWith('markerRecordedEventAttributes.details.patch-data.payloads.0'))
        return fields.join() !== 'deprecated,id';
      if (/markerRecordedEventAttributes\.details\.data\.payloads\.0$/.test(path))
        return (
          fields.join() !==
          'activity_id,activity_type,attempt,backoff,complete_time,original_schedule_time,seq'
        );
      if (path.endsWith('header.fields._tracer-data')) return fields.join() !== 'traceparent';
      return true;
    })
    .map(({ path }) => path);
  expect(unexpected).toEqual([]);
  const leaks = Object.entries(personalData).filter(
    ([, value]) => json.includes(value) || decodedText.includes(value),
  );
  expect(leaks).toEqual([]);
});

test('the client data converter decodes what the server stored back to the passengers details', async () => {
  const created = await testBed.saga.application.createBooking(testBed.customer, {
    tripId: testBed.trip.tripId,
    passengers: [
      {
        firstName: personalData.firstName,
        lastName: personalData.lastName,
        email: personalData.email,
        seatNumber: testBed.trip.seatNumbers[2],
        fareClass: 'STANDARD',
      },
    ],
    contactEmail: personalData.contactEmail,
  });
  const history = await storedHistory(bookingWorkflowId(created.id));
  const stored = payloadsIn(JSON.parse(historyToJSON(history)))
    .filter(({ path }) => !path.includes('searchAttributes'))
    .map(({ payload }) => JSONToPayload(payload));
  const codec = testBed.saga.client.options.loadedDataConverter.payloadCodecs[0];

  const decoded = await codec.decode(stored);

  const text = (payloads: Payload[]) =>
    payloads.map((payload) => Buffer.from(payload.data ?? new Uint8Array()).toString('utf8')).join('\n');
  expect(text(stored)).not.toContain(personalData.firstName);
  expect(text(decoded)).toContain(personalData.firstName);
  expect(text(decoded)).toContain(personalData.contactEmail);
});
