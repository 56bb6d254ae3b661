// Ticket tokens: signed with ES256, verified with nothing but a JWKS; every way a scan can fail has its reason.
import { exportJWK, generateKeyPair, SignJWT, type JSONWebKeySet } from 'jose';
import { DomainError } from '../../../src/domain/errors';
import type { TicketClaims } from '../../../src/domain/tickets';
import {
  signTicket,
  ticketIssuer,
  ticketTokenType,
  verifyTicket,
  type TicketSigningKey,
} from '../../../src/security/ticket-tokens';

const claims: TicketClaims = {
  ticketId: '0b6f3c1e-7d2a-5f4b-9c8d-1a2b3c4d5e6f',
  bookingId: 'b6e2f0a4-1c3d-4e5f-8a9b-0c1d2e3f4a5b',
  passengerId: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
  tripId: 'trip-lis-por-1',
  boardingStopCode: 'LIS',
  alightingStopCode: 'POR',
  seatNumber: '3C',
  validFrom: '2026-12-01T07:00:00.000Z',
  validUntil: '2026-12-01T13:30:00.000Z',
};
const during = { now: new Date('2026-12-01T10:00:00.000Z') };

async function keyPair(kid: string): Promise<{ key: TicketSigningKey; jwks: JSONWebKeySet }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { key: { kid, privateKey }, jwks: { keys: [jwk] } };
}

async function reasonOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const domainError = error as DomainError;
    expect(domainError.code).toBe('TICKET_INVALID');
    return domainError.details.reason;
  }
  throw new Error('the ticket was accepted');
}

let ours: { key: TicketSigningKey; jwks: JSONWebKeySet };
let token: string;

beforeAll(async () => {
  ours = await keyPair('ticket-key-one-0001');
  token = await signTicket(claims, ours.key, new Date('2026-11-28T00:00:00.000Z'));
});

describe('verifyTicket', () => {
  it('answers the claims of a ticket signed by a published key, inside its window', async () => {
    await expect(verifyTicket(token, ours.jwks, during)).resolves.toEqual(claims);
  });

  it('refuses a forged signature', async () => {
    const [header, payload, signature] = token.split('.');
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    await expect(reasonOf(verifyTicket(`${header}.${payload}.${flipped}`, ours.jwks, during))).resolves.toBe(
      'signature',
    );
  });

  it('refuses altered claims under the original signature', async () => {
    const [header, , signature] = token.split('.');
    const payload = Buffer.from(JSON.stringify({ seat: '1A', sub: claims.passengerId })).toString(
      'base64url',
    );
    await expect(
      reasonOf(verifyTicket(`${header}.${payload}.${signature}`, ours.jwks, during)),
    ).resolves.toBe('signature');
  });

  it.each([
    ['cut in half', (value: string) => value.slice(0, Math.floor(value.length / 2))],
    ['without its signature', (value: string) => value.slice(0, value.lastIndexOf('.') + 1)],
    ['shortened signature', (value: string) => value.slice(0, -10)],
    ['not a token', () => 'hello'],
    ['empty', () => ''],
  ])('refuses a truncated or garbled token (%s)', async (_, mangle) => {
    await expect(reasonOf(verifyTicket(mangle(token), ours.jwks, during))).resolves.toMatch(
      /^(malformed|signature)$/,
    );
  });

  it('a token cut in half is malformed', async () => {
    await expect(reasonOf(verifyTicket(token.slice(0, 40), ours.jwks, during))).resolves.toBe('malformed');
  });

  it('refuses a token signed by a foreign key with a kid the set does not publish', async () => {
    const foreign = await keyPair('someone-elses-key-01');
    const forged = await signTicket(claims, foreign.key);
    await expect(reasonOf(verifyTicket(forged, ours.jwks, during))).resolves.toBe('unknown_key');
  });

  it('refuses a token signed by a foreign key that borrows a published kid', async () => {
    const foreign = await keyPair(ours.key.kid);
    const forged = await signTicket(claims, foreign.key);
    await expect(reasonOf(verifyTicket(forged, ours.jwks, during))).resolves.toBe('signature');
  });

  it('refuses a ticket after the arrival and before boarding opens', async () => {
    await expect(
      reasonOf(verifyTicket(token, ours.jwks, { now: new Date('2026-12-01T14:00:00.000Z') })),
    ).resolves.toBe('expired');
    await expect(
      reasonOf(verifyTicket(token, ours.jwks, { now: new Date('2026-12-01T06:00:00.000Z') })),
    ).resolves.toBe('not_yet_valid');
  });

  it('refuses a JWT that is not a ticket, even signed with a published key', async () => {
    const accessLike = await new SignJWT({ scope: 'bookings:read' })
      .setProtectedHeader({ alg: 'ES256', kid: ours.key.kid, typ: 'at+jwt' })
      .setIssuer(ticketIssuer)
      .setExpirationTime('1h')
      .sign(ours.key.privateKey);
    await expect(reasonOf(verifyTicket(accessLike, ours.jwks))).resolves.toBe('malformed');
    const missingClaims = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: ours.key.kid, typ: ticketTokenType })
      .setIssuer(ticketIssuer)
      .setExpirationTime('1h')
      .sign(ours.key.privateKey);
    await expect(reasonOf(verifyTicket(missingClaims, ours.jwks))).resolves.toBe('malformed');
  });
});
