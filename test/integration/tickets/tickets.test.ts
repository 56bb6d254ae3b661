// E-tickets over HTTP against the real saga: issued on confirmation, verified offline with only the published key
// set, replaced by a seat change, revoked by a cancellation, listed for boarding devices, rendered as a PDF.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { exportJWK, generateKeyPair, type JSONWebKeySet } from 'jose';
import request from 'supertest';
import { createTicketKeyStore } from '../../../src/db/ticket-keys';
import { DomainError } from '../../../src/domain/errors';
import { signTicket, verifyTicket } from '../../../src/security/ticket-tokens';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, restBookingBody, type TestTrip } from '../../support/trips';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../../support/rest-app';
import { insertUser } from '../../support/users';

jest.setTimeout(120_000);

interface TicketJson {
  id: string;
  booking_id: string;
  passenger_id: string;
  passenger_name: string | null;
  trip_id: string;
  seat_number: string;
  segment: { boarding_stop: { code: string }; alighting_stop: { code: string }; departure_time: string };
  status: 'VALID' | 'REVOKED';
  revoked_reason: string | null;
  qr_payload: string | null;
}

/** The fields of a Booking answer these checks read. */
interface BookingBody {
  id: string;
  status: string;
  version: number;
  departure_time: string;
  passengers: { id: string }[];
}

let saga: SagaEnvironment;
let trip: TestTrip;
let server: RunningServer;
const tokens: Record<'customer' | 'driver' | 'other', string> = { customer: '', driver: '', other: '' };
let seatIndex = 0;

beforeAll(async () => {
  saga = await startSagaEnvironment();
  trip = await createTrip(saga.database, { seatCount: 24 });
  const issuer = await createTokenIssuer();
  const [customer, other, driver] = await Promise.all([
    insertUser(saga.database, saga.cipher, { roles: ['customer'] }),
    insertUser(saga.database, saga.cipher, { roles: ['customer'] }),
    insertUser(saga.database, saga.cipher, { roles: ['driver'] }),
  ]);
  tokens.customer = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  tokens.other = await issuer.issueToken({ userId: other.id, roles: ['customer'] });
  tokens.driver = await issuer.issueToken({ userId: driver.id, roles: ['driver'] });
  server = await startServer(
    buildApp({
      database: saga.database,
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

const bearer = (token: string) => `Bearer ${token}`;

function nextSeat(): string {
  return trip.seatNumbers[seatIndex++];
}

/** A booking of the customer's, created and paid over REST: CONFIRMED. */
async function confirmedBooking(): Promise<{ id: string; version: number; passengerId: string }> {
  const created = await request(server.baseUrl)
    .post('/v1/bookings')
    .set('Authorization', bearer(tokens.customer))
    .set('Idempotency-Key', randomUUID())
    .send(restBookingBody(trip, nextSeat()));
  expect(created.status).toBe(201);
  const paid = await request(server.baseUrl)
    .post(`/v1/bookings/${(created.body as BookingBody).id}/payment`)
    .set('Authorization', bearer(tokens.customer))
    .send({ payment_token: 'tok_visa' });
  const booking = paid.body as BookingBody;
  expect(booking.status).toBe('CONFIRMED');
  return { id: booking.id, version: booking.version, passengerId: booking.passengers[0].id };
}

async function ticketsOf(bookingId: string, token = tokens.customer): Promise<TicketJson[]> {
  const response = await request(server.baseUrl)
    .get(`/v1/bookings/${bookingId}/tickets`)
    .set('Authorization', bearer(token));
  expect(response.status).toBe(200);
  return (response.body as { tickets: TicketJson[] }).tickets;
}

/** What a boarding device holds: the key set fetched over HTTP, nothing else of the service. */
async function fetchKeySet(): Promise<JSONWebKeySet> {
  const response = await fetch(`${server.baseUrl}/v1/tickets/jwks.json`);
  expect(response.status).toBe(200);
  return (await response.json()) as JSONWebKeySet;
}

async function reasonOf(verification: Promise<unknown>): Promise<unknown> {
  const error = await verification.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).code).toBe('TICKET_INVALID');
  return (error as DomainError).details.reason;
}

describe('tickets of a confirmed booking', () => {
  it('gives each passenger a ticket that a verifier holding only the fetched key set accepts', async () => {
    const booking = await confirmedBooking();
    const [ticket] = await ticketsOf(booking.id);
    expect(ticket).toMatchObject({
      booking_id: booking.id,
      passenger_id: booking.passengerId,
      trip_id: trip.tripId,
      status: 'VALID',
      revoked_reason: null,
    });

    const keySet = await fetchKeySet();
    expect(keySet.keys.length).toBeGreaterThan(0);
    expect(keySet.keys.every((key) => key.alg === 'ES256' && key.d === undefined)).toBe(true);
    const departure = new Date(ticket.segment.departure_time);
    const claims = await verifyTicket(ticket.qr_payload!, keySet, { now: departure });
    expect(claims).toMatchObject({
      ticketId: ticket.id,
      bookingId: booking.id,
      passengerId: booking.passengerId,
      tripId: trip.tripId,
      seatNumber: ticket.seat_number,
      boardingStopCode: ticket.segment.boarding_stop.code,
      alightingStopCode: ticket.segment.alighting_stop.code,
    });

    // The confirmation email carries the ticket as a PDF attachment.
    const email = await readFile(
      path.join(saga.outboxDirectory, 'email', `${booking.id}_send-email_confirmed.eml`),
      'utf8',
    );
    expect(email).toMatch(/Content-Type: application\/pdf/);
    expect(email).toMatch(new RegExp(`filename="?ticket-${ticket.id}\\.pdf"?`));
  });

  it('refuses a forged signature, a truncated token and a token signed by a foreign key, each with its reason', async () => {
    const booking = await confirmedBooking();
    const [ticket] = await ticketsOf(booking.id);
    const keySet = await fetchKeySet();
    const now = new Date(ticket.segment.departure_time);
    const token = ticket.qr_payload!;
    const [header, payload, signature] = token.split('.');
    const forged = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    await expect(reasonOf(verifyTicket(forged, keySet, { now }))).resolves.toBe('signature');
    await expect(reasonOf(verifyTicket(token.slice(0, token.length / 2), keySet, { now }))).resolves.toBe(
      'malformed',
    );

    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const foreignKid = `foreign-${randomUUID()}`;
    const claims = await verifyTicket(token, keySet, { now });
    const foreign = await signTicket(claims, { kid: foreignKid, privateKey });
    await expect(reasonOf(verifyTicket(foreign, keySet, { now }))).resolves.toBe('unknown_key');
    // The same foreign key would verify its own token: the refusal is the key set's doing.
    const foreignSet = { keys: [{ ...(await exportJWK(publicKey)), kid: foreignKid, alg: 'ES256' }] };
    await expect(verifyTicket(foreign, foreignSet, { now })).resolves.toMatchObject({ ticketId: ticket.id });
  });

  it('a seat change revokes the old ticket and issues one for the new seat; drivers see the revocation', async () => {
    const booking = await confirmedBooking();
    const [before] = await ticketsOf(booking.id);
    const newSeat = nextSeat();
    const changed = await request(server.baseUrl)
      .patch(`/v1/bookings/${booking.id}`)
      .set('Authorization', bearer(tokens.customer))
      .set('If-Match', `"${booking.version}"`)
      .send({ seat_changes: [{ passenger_id: booking.passengerId, seat_number: newSeat }] });
    expect(changed.status).toBe(200);

    const after = await ticketsOf(booking.id);
    expect(after).toHaveLength(2);
    expect(after.find((ticket) => ticket.id === before.id)).toMatchObject({
      status: 'REVOKED',
      revoked_reason: 'SEAT_CHANGED',
      qr_payload: null,
    });
    const replacement = after.find((ticket) => ticket.id !== before.id)!;
    expect(replacement).toMatchObject({
      status: 'VALID',
      seat_number: newSeat,
      passenger_id: booking.passengerId,
    });
    const claims = await verifyTicket(replacement.qr_payload!, await fetchKeySet(), {
      now: new Date(replacement.segment.departure_time),
    });
    expect(claims.seatNumber).toBe(newSeat);

    const revocations = await request(server.baseUrl)
      .get(`/v1/trips/${trip.tripId}/ticket-revocations`)
      .set('Authorization', bearer(tokens.driver));
    expect(revocations.status).toBe(200);
    expect((revocations.body as { revocations: unknown[] }).revocations).toContainEqual(
      expect.objectContaining({ ticket_id: before.id, reason: 'SEAT_CHANGED' }),
    );
    const asCustomer = await request(server.baseUrl)
      .get(`/v1/trips/${trip.tripId}/ticket-revocations`)
      .set('Authorization', bearer(tokens.customer));
    expect(asCustomer.status).toBe(403);
  });

  it('a cancellation revokes every ticket of the booking, and the PDF is gone with them', async () => {
    const booking = await confirmedBooking();
    const pdf = await request(server.baseUrl)
      .get(`/v1/bookings/${booking.id}/tickets/${booking.passengerId}.pdf`)
      .set('Authorization', bearer(tokens.customer))
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect((pdf.body as Buffer).subarray(0, 5).toString()).toBe('%PDF-');

    const cancelled = await request(server.baseUrl)
      .put(`/v1/bookings/${booking.id}/cancel`)
      .set('Authorization', bearer(tokens.customer))
      .send({ reason: 'Plans changed' });
    expect((cancelled.body as BookingBody).status).toBe('CANCELLED');
    const tickets = await ticketsOf(booking.id);
    expect(tickets.map((ticket) => [ticket.status, ticket.revoked_reason])).toEqual([
      ['REVOKED', 'BOOKING_CANCELLED'],
    ]);
    const gone = await request(server.baseUrl)
      .get(`/v1/bookings/${booking.id}/tickets/${booking.passengerId}.pdf`)
      .set('Authorization', bearer(tokens.customer));
    expect(gone.status).toBe(404);
  });

  it('keeps a rotated ticket key published, so tickets signed before the rotation still verify', async () => {
    const booking = await confirmedBooking();
    const [ticket] = await ticketsOf(booking.id);
    const before = await fetchKeySet();
    const newKid = await createTicketKeyStore({ database: saga.database, cipher: saga.cipher }).rotate();
    const after = await fetchKeySet();
    expect(after.keys.map((key) => key.kid)).toEqual([newKid, ...before.keys.map((key) => key.kid)]);
    await expect(
      verifyTicket(ticket.qr_payload!, after, { now: new Date(ticket.segment.departure_time) }),
    ).resolves.toMatchObject({ ticketId: ticket.id });
  });

  it('answers another customer as if the booking did not exist', async () => {
    const booking = await confirmedBooking();
    const response = await request(server.baseUrl)
      .get(`/v1/bookings/${booking.id}/tickets`)
      .set('Authorization', bearer(tokens.other));
    expect(response.status).toBe(404);
    expect((response.body as { code: string }).code).toBe('NOT_FOUND');
  });
});
