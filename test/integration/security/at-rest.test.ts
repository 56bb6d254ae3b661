// Encryption at rest through the real API and saga: PostgreSQL holds envelopes, the owner reads plaintext.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import { eventually } from '../../support/outcomes';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../../support/rest-app';
import { insertUser } from '../../support/users';

jest.setTimeout(120_000);

const envelopePattern = /^enc:v1:[A-Za-z0-9_-]+:[A-Za-z0-9+/]+=*$/;

const passengers = [
  {
    first_name: 'Gertrudes',
    last_name: 'Bettencourt',
    email: 'gertrudes.bettencourt@at-rest.example',
    phone: '+351913579246',
  },
  {
    first_name: 'Anacleto',
    last_name: 'Figueiroa',
    email: 'anacleto.figueiroa@at-rest.example',
    phone: '+351924680135',
  },
];
const contact = { contact_email: 'bettencourt.home@at-rest.example', contact_phone: '+351935791357' };
const plaintexts = [
  ...passengers.flatMap((passenger) => Object.values(passenger)),
  ...Object.values(contact),
  'visa •••• 4242',
];

let saga: SagaEnvironment;
let database: Knex;
let trip: TestTrip;
let server: RunningServer;
const tokens: Record<'owner' | 'other', string> = { owner: '', other: '' };

beforeAll(async () => {
  saga = await startSagaEnvironment();
  database = saga.database;
  trip = await createTrip(database, { seatCount: 8 });
  const issuer = await createTokenIssuer();
  const owner = await insertUser(database, saga.cipher, { roles: ['customer'] });
  const other = await insertUser(database, saga.cipher, { roles: ['customer'] });
  tokens.owner = await issuer.issueToken({ userId: owner.id, roles: ['customer'] });
  tokens.other = await issuer.issueToken({ userId: other.id, roles: ['customer'] });
  server = await startServer(
    buildApp({
      database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: saga.application,
    }),
  );
});

afterAll(async () => {
  await server?.close();
  await saga?.stop();
});

async function call(path: string, token: string, init: { method?: string; body?: unknown } = {}) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      'idempotency-key': randomUUID(),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Each named column is an envelope decrypting to the expected value; no plaintext is anywhere in the row. */
function expectEncrypted(row: Record<string, unknown>, expected: Record<string, string>): void {
  for (const [column, plaintext] of Object.entries(expected)) {
    expect({ column, value: row[column] }).toEqual({ column, value: expect.stringMatching(envelopePattern) });
    expect(saga.cipher.decrypt(row[column] as string)).toBe(plaintext);
  }
  const rowText = JSON.stringify(row).toLowerCase();
  expect(plaintexts.filter((plaintext) => rowText.includes(plaintext.toLowerCase()))).toEqual([]);
}

/** The columns this file reads back as envelopes, by table. */
const checkedColumns: Record<string, string[]> = {
  passengers: Object.keys(passengers[0]),
  bookings: [...Object.keys(contact), 'payment_method_masked'],
  payments: ['method_masked'],
  notifications: ['recipient', 'body'],
};

describe('sensitive data at rest', () => {
  it('checks every column the schema requires to hold envelopes in these tables', async () => {
    const { rows } = await database.raw<{ rows: { table_name: string; column_name: string }[] }>(
      `SELECT constraint_row.conrelid::regclass::text AS table_name, attribute.attname AS column_name
         FROM pg_constraint constraint_row
         JOIN pg_attribute attribute
           ON attribute.attrelid = constraint_row.conrelid AND attribute.attnum = ANY (constraint_row.conkey)
        WHERE constraint_row.contype = 'c'
          AND constraint_row.conname LIKE '%\\_encrypted'
          AND constraint_row.conrelid = ANY (?::regclass[])`,
      [Object.keys(checkedColumns)],
    );
    const required: Record<string, string[]> = {};
    for (const row of rows) (required[row.table_name] ??= []).push(row.column_name);
    for (const columns of Object.values(required)) columns.sort();
    expect(required).toEqual(
      Object.fromEntries(
        Object.entries(checkedColumns).map(([table, columns]) => [table, [...columns].sort()]),
      ),
    );
  });

  let bookingId: string;

  it('stores passenger names, emails and phones and the contact details as enc:v1 envelopes', async () => {
    const created = await call('/v1/bookings', tokens.owner, {
      method: 'POST',
      body: {
        trip_id: trip.tripId,
        passengers: passengers.map((passenger, index) => ({
          ...passenger,
          seat_number: trip.seatNumbers[index],
          fare_class: 'STANDARD',
        })),
        ...contact,
      },
    });
    expect(created.status).toBe(201);
    bookingId = created.body.id as string;

    const passengerRows = (
      await database.raw<{ rows: Record<string, unknown>[] }>(
        'SELECT * FROM passengers WHERE booking_id = ? ORDER BY position',
        [bookingId],
      )
    ).rows;
    expect(passengerRows).toHaveLength(passengers.length);
    passengerRows.forEach((row, index) => expectEncrypted(row, passengers[index]));

    const [bookingRow] = (
      await database.raw<{ rows: Record<string, unknown>[] }>('SELECT * FROM bookings WHERE id = ?', [
        bookingId,
      ])
    ).rows;
    expectEncrypted(bookingRow, contact);

    // The replayable answer kept for the Idempotency-Key holds the same names: it is one envelope too.
    const [idempotencyRow] = (
      await database.raw<{ rows: Record<string, unknown>[] }>(
        `SELECT * FROM idempotency_keys
          WHERE response_body IS NOT NULL AND response_headers->>'location' LIKE ?`,
        [`%${bookingId}`],
      )
    ).rows;
    expect(idempotencyRow.response_body).toEqual(expect.stringMatching(envelopePattern));
    expectEncrypted(idempotencyRow, {});
  });

  it('returns the plaintext to the owner and answers 404 to another customer', async () => {
    const own = await call(`/v1/bookings/${bookingId}`, tokens.owner);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      ...contact,
      passengers: passengers.map((passenger) => expect.objectContaining(passenger)),
    });

    const foreign = await call(`/v1/bookings/${bookingId}`, tokens.other);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
    expect(JSON.stringify(foreign.body)).not.toContain(passengers[0].last_name);
  });

  it('keeps the masked card and the notifications sent after payment encrypted', async () => {
    const paid = await call(`/v1/bookings/${bookingId}/payment`, tokens.owner, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
    });
    expect(paid.body).toMatchObject({ status: 'CONFIRMED', payment: { method: 'visa •••• 4242' } });

    const [bookingRow] = (
      await database.raw<{ rows: Record<string, unknown>[] }>('SELECT * FROM bookings WHERE id = ?', [
        bookingId,
      ])
    ).rows;
    expectEncrypted(bookingRow, { ...contact, payment_method_masked: 'visa •••• 4242' });
    const [paymentRow] = (
      await database.raw<{ rows: Record<string, unknown>[] }>(
        "SELECT * FROM payments WHERE booking_id = ? AND status = 'APPROVED'",
        [bookingId],
      )
    ).rows;
    expectEncrypted(paymentRow, { method_masked: 'visa •••• 4242' });

    const notificationRows = await eventually(
      async () =>
        (
          await database.raw<{ rows: Record<string, unknown>[] }>(
            "SELECT * FROM notifications WHERE booking_id = ? AND template = 'booking-confirmed'",
            [bookingId],
          )
        ).rows,
      (rows) => rows.length >= 2,
    );
    for (const row of notificationRows) {
      expect(row.recipient).toEqual(expect.stringMatching(envelopePattern));
      expect(row.body).toEqual(expect.stringMatching(envelopePattern));
      expectEncrypted(row, {});
    }
  });
});
