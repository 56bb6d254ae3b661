// The codec endpoint for a Temporal UI served over HTTPS from another origin: the API's HTTPS (HTTP/2) listener
// answers the UI's preflight and calls for that origin only, and authorizes every call by its bearer token as before.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { defaultPayloadConverter } from '@temporalio/common';
import { JSONToPayload, payloadToJSON, type JSONPayload } from '@temporalio/common/lib/proto-utils';
import { createBookingDataConverter } from '../../../src/security/temporal-payload-codec';
import {
  createCertificateAuthority,
  issueCertificate,
  type CertificateFiles,
} from '../../../dev/stack/development-certificates';
import { openTestDatabase, testCipher, testConfig } from '../../support/database';
import {
  bookingsOutOfScope,
  buildApp,
  createTokenIssuer,
  startServer,
  testSettings,
  type RunningServer,
} from '../../support/rest-app';

const temporalUiOrigin = 'https://temporal-ui.bookings.example';
const passenger = {
  firstName: 'Leopoldina',
  lastName: 'Vasconcelos',
  email: 'leopoldina.v@codec-tls.example',
};
const codec = createBookingDataConverter(testConfig()).payloadCodecs![0];

let directory: string;
let authority: CertificateFiles;
let database: Knex;
let issuer: Awaited<ReturnType<typeof createTokenIssuer>>;
let server: RunningServer;
let session: http2.ClientHttp2Session;

beforeAll(async () => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'codec-https-'));
  authority = createCertificateAuthority(directory, { name: 'ca', commonName: 'Codec Test CA' });
  const certificate = issueCertificate(authority, directory, {
    name: 'api',
    commonName: 'api.bookings.example',
    usage: 'server',
    ipAddresses: ['127.0.0.1'],
  });
  database = openTestDatabase();
  issuer = await createTokenIssuer();
  const app = buildApp({
    database,
    cipher: testCipher(),
    operationGuard: issuer.operationGuard,
    bookings: bookingsOutOfScope,
    // Production: no loopback exception.
    settings: testSettings({ codec: { corsOrigins: [temporalUiOrigin], allowLoopbackWithoutToken: false } }),
  });
  server = await startServer(app, {
    certificateFile: certificate.certificate,
    keyFile: certificate.privateKey,
  });
  // HTTP/2 over TLS, as a browser talks to the API's HTTPS listener.
  session = http2.connect(server.baseUrl, { ca: fs.readFileSync(authority.certificate) });
});

afterAll(async () => {
  session?.close();
  await server?.close();
  await database?.destroy();
  fs.rmSync(directory, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}

function send(method: string, requestPath: string, headers: Record<string, string>, body?: string) {
  return new Promise<Answer>((resolve, reject) => {
    const stream = session.request({ ':method': method, ':path': requestPath, ...headers });
    let responseHeaders: http2.IncomingHttpHeaders = {};
    let text = '';
    stream.on('response', (received) => {
      responseHeaders = received;
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
    });
    stream.on('end', () =>
      resolve({ status: Number(responseHeaders[':status']), headers: responseHeaders, body: text }),
    );
    stream.on('error', reject);
    stream.end(body);
  });
}

/** The Temporal UI's own request: POST `<endpoint>/decode` with the namespace and the operator's access token. */
async function decodeFromTheUi(headers: Record<string, string>): Promise<Answer> {
  const payloads = (await codec.encode([defaultPayloadConverter.toPayload(passenger)])).map((payload) =>
    payloadToJSON(payload),
  );
  const body = JSON.stringify({ payloads });
  return send(
    'POST',
    '/codec/decode',
    {
      origin: temporalUiOrigin,
      'content-type': 'application/json',
      // A browser's fetch sends the length of a known body, over HTTP/2 too.
      'content-length': String(Buffer.byteLength(body)),
      'x-namespace': 'bookings',
      ...headers,
    },
    body,
  );
}

const preflight = (origin: string) =>
  send('OPTIONS', '/codec/decode', {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization,content-type,x-namespace',
  });

describe('the codec endpoint for a Temporal UI on another HTTPS origin', () => {
  it('answers the UI origin’s preflight over HTTPS with the headers the UI sends, without credentials', async () => {
    const answer = await preflight(temporalUiOrigin);
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe(temporalUiOrigin);
    expect(answer.headers['access-control-allow-methods']).toContain('POST');
    for (const header of ['Authorization', 'Content-Type', 'X-Namespace']) {
      expect(answer.headers['access-control-allow-headers']).toContain(header);
    }
    // Cookies are never how the endpoint is authorized: TEMPORAL_CODEC_INCLUDE_CREDENTIALS stays false.
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers no other origin, the same host over plain HTTP included', async () => {
    for (const origin of ['http://temporal-ui.bookings.example', 'https://elsewhere.example']) {
      const answer = await preflight(origin);
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('decodes for an agent’s token and lets the UI page read the answer', async () => {
    const token = await issuer.issueToken({ userId: randomUUID(), roles: ['agent'] });
    const answer = await decodeFromTheUi({ authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe(temporalUiOrigin);
    expect(answer.headers['cache-control']).toBe('no-store');
    const { payloads } = JSON.parse(answer.body) as { payloads: JSONPayload[] };
    expect(payloads.map((payload) => defaultPayloadConverter.fromPayload(JSONToPayload(payload)))).toEqual([
      passenger,
    ]);
  });

  it('still refuses the UI’s call without a token (401) and with a customer’s (403)', async () => {
    const anonymous = await decodeFromTheUi({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).not.toContain(passenger.lastName);
    const customer = await issuer.issueToken({ userId: randomUUID(), roles: ['customer'] });
    const refused = await decodeFromTheUi({ authorization: `Bearer ${customer}` });
    expect(refused.status).toBe(403);
    expect(refused.body).not.toContain(passenger.lastName);
  });
});
