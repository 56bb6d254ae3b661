// The operators' codec endpoint: staff tokens decode and encode, customers and strangers do not, development loopback does.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { defaultPayloadConverter } from '@temporalio/common';
import { JSONToPayload, payloadToJSON, type JSONPayload } from '@temporalio/common/lib/proto-utils';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { createBookingDataConverter } from '../../../src/security/temporal-payload-codec';
import { testConfig } from '../../support/database';
import { expectContract, observe, type ObservedResponse } from '../../support/rest-contract';
import {
  bookingsOutOfScope,
  buildApp,
  createTokenIssuer,
  startServer,
  testSettings,
  type RunningServer,
} from '../../support/rest-app';
import { openTestDatabase, testCipher } from '../../support/database';

jest.setTimeout(30_000);

const temporalUiOrigin = 'http://localhost:8233';
const passenger = { firstName: 'Custódia', lastName: 'Figueiredo', email: 'custodia.f@codec-test.example' };
/** The workers' and clients' converter in the saga tests, which buildApp's codec endpoint shares. */
const dataConverter = createBookingDataConverter(testConfig());
const codec = dataConverter.payloadCodecs![0];

let database: Knex;
let cipher: FieldCipher;
let issuer: Awaited<ReturnType<typeof createTokenIssuer>>;
let tokens: Record<'customer' | 'agent' | 'admin', string>;
let production: RunningServer;
let development: RunningServer;

beforeAll(async () => {
  database = openTestDatabase();
  cipher = testCipher();
  issuer = await createTokenIssuer();
  tokens = {
    customer: await issuer.issueToken({ userId: randomUUID(), roles: ['customer'] }),
    agent: await issuer.issueToken({ userId: randomUUID(), roles: ['agent'] }),
    admin: await issuer.issueToken({ userId: randomUUID(), roles: ['admin'] }),
  };
  const app = (allowLoopbackWithoutToken: boolean) =>
    buildApp({
      database,
      cipher,
      operationGuard: issuer.operationGuard,
      bookings: bookingsOutOfScope,
      settings: testSettings({ codec: { corsOrigins: [temporalUiOrigin], allowLoopbackWithoutToken } }),
    });
  production = await startServer(app(false));
  development = await startServer(app(true));
});

afterAll(async () => {
  await production?.close();
  await development?.close();
  await database?.destroy();
});

async function encryptedPassenger(): Promise<JSONPayload[]> {
  return (await codec.encode([defaultPayloadConverter.toPayload(passenger)])).map((payload) =>
    payloadToJSON(payload),
  );
}

async function post(
  server: RunningServer,
  action: 'decode' | 'encode',
  payloads: JSONPayload[],
  headers: Record<string, string> = {},
): Promise<ObservedResponse> {
  return observe(
    // Exactly as the Temporal Web UI sends it (the temporal CLI sends no query; see the `{}` test below).
    await fetch(`${server.baseUrl}/codec/${action}?preserveStorageRefs=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
      body: JSON.stringify({ payloads }),
    }),
  );
}

function decodedValues(response: ObservedResponse): unknown[] {
  const { payloads } = response.body as { payloads: JSONPayload[] };
  return payloads.map((payload) => defaultPayloadConverter.fromPayload(JSONToPayload(payload)));
}

describe('POST /codec/decode', () => {
  it.each(['agent', 'admin'] as const)(
    'decrypts payloads for an %s, as the Temporal UI sends them',
    async (role) => {
      const encrypted = await encryptedPassenger();
      const plaintext = payloadToJSON(defaultPayloadConverter.toPayload('not encrypted'));

      const response = await post(production, 'decode', [...encrypted, plaintext], {
        authorization: `Bearer ${tokens[role]}`,
      });

      expectContract('decodePayloads', response);
      expect(response.status).toBe(200);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(decodedValues(response)).toEqual([passenger, 'not encrypted']);
    },
  );

  it('refuses a customer with 403, whatever the payload', async () => {
    const response = await post(production, 'decode', await encryptedPassenger(), {
      authorization: `Bearer ${tokens.customer}`,
    });
    expectContract('decodePayloads', response);
    expect([response.status, (response.body as { code: string }).code]).toEqual([403, 'PERMISSION_DENIED']);
  });

  it('refuses a caller without a token with 401 outside development, loopback or not', async () => {
    const response = await post(production, 'decode', await encryptedPassenger());
    expectContract('decodePayloads', response);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(JSON.stringify(response.body)).not.toContain(passenger.lastName);
  });

  it('lets a loopback caller without a token in, in development only', async () => {
    const response = await post(development, 'decode', await encryptedPassenger());
    expectContract('decodePayloads', response);
    expect(decodedValues(response)).toEqual([passenger]);
  });

  it('still refuses, in development, a proxied request without a token and a loopback caller with a bad one', async () => {
    const proxied = await post(development, 'decode', await encryptedPassenger(), {
      'x-forwarded-for': '203.0.113.7',
    });
    const badToken = await post(development, 'decode', await encryptedPassenger(), {
      authorization: 'Bearer not.a.jwt',
    });
    const customer = await post(development, 'decode', await encryptedPassenger(), {
      authorization: `Bearer ${tokens.customer}`,
    });
    expect([proxied.status, badToken.status, customer.status]).toEqual([401, 401, 403]);
  });

  it('answers 400 for a payload that fails authentication, without echoing its data', async () => {
    const [encrypted] = await encryptedPassenger();
    const data = Buffer.from(encrypted.data!, 'base64');
    data[data.length - 1] ^= 0x01;

    const response = await post(production, 'decode', [{ ...encrypted, data: data.toString('base64') }], {
      authorization: `Bearer ${tokens.agent}`,
    });

    expectContract('decodePayloads', response);
    expect([response.status, (response.body as { code: string }).code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(JSON.stringify(response.body)).toContain('failed authentication');
  });

  it('reads `{}` as no payloads, as the temporal CLI sends an empty list, and validates the rest', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${tokens.agent}` };
    const empty = await observe(
      await fetch(`${production.baseUrl}/codec/decode`, { method: 'POST', headers, body: '{}' }),
    );
    expect([empty.status, empty.body]).toEqual([200, { payloads: [] }]);
    expectContract('decodePayloads', empty);

    const unknownField = await observe(
      await fetch(`${production.baseUrl}/codec/decode`, { method: 'POST', headers, body: '{"payload":[]}' }),
    );
    const notBase64 = await post(production, 'decode', [{ metadata: { encoding: '%%%' }, data: '***' }], {
      authorization: headers.authorization,
    });
    expect([unknownField.status, notBase64.status]).toEqual([400, 400]);
    expectContract('decodePayloads', notBase64);
  });
});

describe('POST /codec/encode', () => {
  it('encrypts for staff with the active key; decode gives the payload back', async () => {
    const plaintext = [payloadToJSON(defaultPayloadConverter.toPayload(passenger))];
    const encoded = await post(production, 'encode', plaintext, { authorization: `Bearer ${tokens.admin}` });
    expectContract('encodePayloads', encoded);
    const { payloads } = encoded.body as { payloads: JSONPayload[] };
    expect(Buffer.from(payloads[0].metadata!.encoding, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(payloads[0].data!, 'base64').toString('latin1')).not.toContain(passenger.email);

    const decoded = await codec.decode(payloads.map((payload) => JSONToPayload(payload)));
    expect(defaultPayloadConverter.fromPayload(decoded[0])).toEqual(passenger);
  });
});

describe('CORS of the codec endpoint', () => {
  it('answers the Temporal UI origin’s preflight on /codec, and not on the booking API', async () => {
    const preflight = (path: string) =>
      fetch(`${production.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: temporalUiOrigin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace,authorization',
        },
      });
    const codecAnswer = await preflight('/codec/decode');
    const apiAnswer = await preflight('/v1/bookings');
    expect(codecAnswer.headers.get('access-control-allow-origin')).toBe(temporalUiOrigin);
    expect(codecAnswer.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/i);
    expect(apiAnswer.headers.get('access-control-allow-origin')).toBeNull();
  });
});
