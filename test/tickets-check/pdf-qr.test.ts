// `npm run tickets:check`: a ticket PDF from the running test API, rendered by pdftoppm, its QR code read by zbarimg,
// and the decoded payload verified against the ticket key set fetched over HTTP. Writes what it saw to
// .data/tickets-check (the PDF, the PNG, summary.json). Needs scripts/ticket-tools.sh's environment.
import { expect } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import type { JSONWebKeySet } from 'jose';
import { verifyTicket } from '../../src/security/ticket-tokens';
import { startSagaEnvironment, type SagaEnvironment } from '../support/saga';
import { createTrip, restBookingBody, type TestTrip } from '../support/trips';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../support/rest-app';
import { insertUser } from '../support/users';

jest.setTimeout(180_000);

const run = promisify(execFile);
const outputDirectory = path.resolve(__dirname, '../../.data/tickets-check');

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
let token: string;

beforeAll(async () => {
  saga = await startSagaEnvironment();
  trip = await createTrip(saga.database, { seatCount: 8 });
  const issuer = await createTokenIssuer();
  const customer = await insertUser(saga.database, saga.cipher, { roles: ['customer'] });
  token = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  server = await startServer(
    buildApp({
      database: saga.database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: saga.application,
    }),
  );
  await mkdir(outputDirectory, { recursive: true });
});

afterAll(async () => {
  await server?.close();
  await saga?.stop();
});

it('a ticket PDF renders, its QR code decodes, and the payload verifies with only the published key set', async () => {
  const api = request(server.baseUrl);
  const auth = `Bearer ${token}`;
  const created = await api
    .post('/v1/bookings')
    .set('Authorization', auth)
    .set('Idempotency-Key', randomUUID())
    .send(restBookingBody(trip, trip.seatNumbers[0]));
  expect(created.status).toBe(201);
  const paid = await api
    .post(`/v1/bookings/${(created.body as BookingBody).id}/payment`)
    .set('Authorization', auth)
    .send({ payment_token: 'tok_visa' });
  const booking = paid.body as BookingBody;
  expect(booking.status).toBe('CONFIRMED');
  const bookingId = booking.id;
  const passengerId = booking.passengers[0].id;

  const pdf = await api
    .get(`/v1/bookings/${bookingId}/tickets/${passengerId}.pdf`)
    .set('Authorization', auth)
    .buffer(true)
    .parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    });
  expect(pdf.status).toBe(200);
  const pdfBytes = pdf.body as Buffer;
  const pdfFile = path.join(outputDirectory, 'ticket.pdf');
  await writeFile(pdfFile, pdfBytes);

  const pngPrefix = path.join(outputDirectory, 'ticket');
  await run('pdftoppm', ['-png', '-r', '150', '-singlefile', pdfFile, pngPrefix]);
  const pngFile = `${pngPrefix}.png`;
  const pngBytes = (await readFile(pngFile)).length;
  const decoded = (await run('zbarimg', ['--quiet', '--raw', pngFile])).stdout.trim();

  const keySetResponse = await fetch(`${server.baseUrl}/v1/tickets/jwks.json`);
  const keySet = (await keySetResponse.json()) as JSONWebKeySet;
  const departure = new Date(booking.departure_time);
  const claims = await verifyTicket(decoded, keySet, { now: departure });

  const tickets = await api.get(`/v1/bookings/${bookingId}/tickets`).set('Authorization', auth);
  expect(decoded).toBe((tickets.body as { tickets: { qr_payload: string }[] }).tickets[0].qr_payload);
  expect(claims).toMatchObject({
    bookingId,
    passengerId,
    tripId: trip.tripId,
    seatNumber: trip.seatNumbers[0],
  });

  const summary = {
    pdf: { file: pdfFile, bytes: pdfBytes.length },
    png: { file: pngFile, bytes: pngBytes },
    decoded: { characters: decoded.length, start: decoded.slice(0, 40) },
    keySet: { keys: keySet.keys.map((key) => ({ kid: key.kid, alg: key.alg })) },
    verified: claims,
  };
  await writeFile(path.join(outputDirectory, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
});
