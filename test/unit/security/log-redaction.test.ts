// Log capture: personal data and credentials in any logged object never reach the output; the list comes from the contracts.
import { expect } from '@jest/globals';
import { Writable } from 'node:stream';
import { createLogger, redactedFieldNames } from '../../../src/logger';
import { DomainError } from '../../../src/domain/errors';
import { sensitiveFieldNames, sensitivePropertyNames } from '../../../src/contracts/proto-options';
import {
  credentialNames,
  isSensitiveKey,
  openApiSensitiveNames,
  redactSensitive,
  sensitiveLogKeys,
} from '../../../src/security/sensitive-fields';

function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger({ level: 'trace', name: 'capture' }, destination);
  return { logger, output: () => lines.join('') };
}

const secrets = {
  firstName: 'Mariana',
  lastName: 'Quintela-Sousa',
  email: 'mariana.quintela@example.org',
  contactEmail: 'bookings-contact@example.net',
  phone: '+351912345678',
  contactPhone: '+447700900555',
  cardToken: 'tok_visa_4242_secret',
  bearer: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNlY3JldA',
  password: 'correct-horse-battery-staple',
  refreshToken: 'rt_refresh_secret_value',
  maskedCard: 'visa •••• 4242',
};

describe('the redaction list', () => {
  it('holds every field the proto contracts mark sensitive, in proto and TypeScript spelling', () => {
    for (const name of [...sensitiveFieldNames, ...sensitivePropertyNames]) {
      expect(sensitiveLogKeys.has(name)).toBe(true);
    }
    expect(sensitiveFieldNames.size).toBeGreaterThan(0);
  });

  it('holds every property the OpenAPI document marks x-sensitive, including through $ref', () => {
    expect([...openApiSensitiveNames]).toEqual(
      expect.arrayContaining(['first_name', 'last_name', 'email', 'phone', 'contact_email', 'payment_token']),
    );
    for (const name of openApiSensitiveNames) expect(sensitiveLogKeys.has(name)).toBe(true);
  });

  it('finds the login schemas’ password and tokens marked x-sensitive in the OpenAPI document', () => {
    expect([...openApiSensitiveNames]).toEqual(
      expect.arrayContaining(['password', 'access_token', 'refresh_token']),
    );
  });

  it('adds the credentials no contract field carries', () => {
    expect(credentialNames).toEqual(expect.arrayContaining(['authorization', 'cookie']));
    expect(redactedFieldNames).toEqual(expect.arrayContaining(['authorization', 'first_name', 'firstName']));
  });

  it('matches keys whatever their case or separator', () => {
    expect(isSensitiveKey('Authorization')).toBe(true);
    expect(isSensitiveKey('first-name')).toBe(true);
    expect(isSensitiveKey('CONTACT_EMAIL')).toBe(true);
    expect(isSensitiveKey('bookingId')).toBe(false);
    expect(isSensitiveKey('seat_number')).toBe(false);
  });
});

describe('redactSensitive', () => {
  it('leaves the caller’s object untouched and shares branches without secrets', () => {
    const trip = { tripId: 't-1', seats: ['1A'] };
    const original = { trip, passenger: { email: secrets.email } };
    const redacted = redactSensitive(original);
    expect(original.passenger.email).toBe(secrets.email);
    expect(redacted.passenger.email).toBe('[redacted]');
    expect(redacted.trip).toBe(trip);
  });

  it('survives circular references', () => {
    const node: Record<string, unknown> = { email: secrets.email };
    node.self = node;
    expect(JSON.stringify(redactSensitive(node))).not.toContain(secrets.email);
  });
});

describe('a logger capturing a whole booking flow', () => {
  it('writes none of the personal data, card token or credentials', () => {
    const { logger, output } = capturingLogger();
    const request = logger.child({
      requestId: 'req-1',
      headers: { Authorization: `Bearer ${secrets.bearer}` },
    });
    request.info(
      {
        req: { method: 'POST', url: '/v1/bookings', headers: { authorization: `Bearer ${secrets.bearer}` } },
        body: {
          trip_id: 'trip-1',
          contact_email: secrets.contactEmail,
          contact_phone: secrets.contactPhone,
          passengers: [
            {
              first_name: secrets.firstName,
              last_name: secrets.lastName,
              email: secrets.email,
              phone: secrets.phone,
            },
          ],
        },
      },
      'create booking',
    );
    request.info(
      {
        workflow: {
          input: {
            booking: {
              passengers: [
                {
                  firstName: secrets.firstName,
                  lastName: secrets.lastName,
                  email: secrets.email,
                  phone: secrets.phone,
                },
              ],
              contactEmail: secrets.contactEmail,
            },
          },
        },
      },
      'workflow started',
    );
    request.info(
      { payment: { paymentToken: secrets.cardToken, payment_token: secrets.cardToken } },
      'paying',
    );
    request.info({ payment: { status: 'CAPTURED', method: secrets.maskedCard } }, 'paid');
    request.info({ method: 'POST', path: '/v1/bookings/b-1/payment', status: 200 }, 'request');
    request.info(
      { metadata: { authorization: [`Bearer ${secrets.bearer}`] }, login: { password: secrets.password } },
      'grpc call and login',
    );
    request.info({ tokens: { access_token: secrets.bearer, refresh_token: secrets.refreshToken } }, 'tokens');
    request.error(
      {
        err: new DomainError('NOT_FOUND', 'Booking b-1 was not found', {
          details: { contact: { email: secrets.email }, phone: secrets.phone },
        }),
      },
      'failed',
    );
    request.warn({
      deep: { a: { b: { c: { d: { e: { f: { passenger: { lastName: secrets.lastName } } } } } } } },
    });

    const captured = output();
    expect(captured).toContain('create booking');
    expect(captured).toContain('Booking b-1 was not found');
    expect(captured).toContain('trip-1');
    expect(captured).toContain('"method":"POST"');
    for (const value of Object.values(secrets)) expect(captured).not.toContain(value);
    expect(captured).toContain('[redacted]');
  });
});
