// HTTP/2 over TLS with HTTP/1.1 fallback on one port: both protocols get the same answer.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import Koa from 'koa';
import { identityProviderRouter } from '../../../src/api/rest/auth-routes';
import type { AuthorizationServer } from '../../../src/identity/authorization-server';
import type { IdentityProvider } from '../../../src/identity/identity-provider';
import {
  bookingsOutOfScope,
  buildApp,
  createTokenIssuer,
  startServer,
  type RunningServer,
} from '../../support/rest-app';
import { openTestDatabase, testCipher } from '../../support/database';
import { insertUser, type TestUser } from '../../support/users';

jest.setTimeout(30_000);

interface Answer {
  protocol: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers that describe the content, not the connection or the moment. */
const comparedHeaders = ['content-type', 'x-request-id', 'etag', 'allow', 'www-authenticate'];

let directory: string;
let tlsFiles: { certificateFile: string; keyFile: string };
let certificate: Buffer;
let database: Knex;
let customer: TestUser;
let token: string;
let server: RunningServer;

beforeAll(async () => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rest-http2-'));
  const certificateFile = path.join(directory, 'certificate.pem');
  const keyFile = path.join(directory, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certificateFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  certificate = fs.readFileSync(certificateFile);
  tlsFiles = { certificateFile, keyFile };

  database = openTestDatabase();
  const cipher = testCipher();
  const issuer = await createTokenIssuer();
  customer = await insertUser(database, cipher, { roles: ['customer'] });
  token = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  const app = buildApp({
    database,
    cipher,
    operationGuard: issuer.operationGuard,
    bookings: bookingsOutOfScope,
  });
  server = await startServer(app, tlsFiles);
});

afterAll(async () => {
  await server?.close();
  if (database) {
    if (customer) await database('users').where('id', customer.id).delete();
    await database.destroy();
  }
  if (directory) fs.rmSync(directory, { recursive: true, force: true });
});

function pickHeaders(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    comparedHeaders
      .filter((name) => headers[name] !== undefined)
      .map((name) => [name, String(headers[name])]),
  );
}

/** Sends one request and collects its answer: the same arguments over either protocol. */
type SendRequest = (
  requestPath: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
  baseUrl?: string,
) => Promise<Answer>;

const overHttp1: SendRequest = (requestPath, method, headers, body, baseUrl = server.baseUrl) =>
  new Promise((resolve, reject) => {
    const request = https.request(
      `${baseUrl}${requestPath}`,
      { method, headers, ca: certificate, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            protocol: `HTTP/${response.httpVersion}`,
            status: response.statusCode ?? 0,
            headers: pickHeaders(response.headers),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });

/**
 * HTTP/2 needs no Content-Length: the stream's end marks the end of the body, and this client sends none. Without a
 * body the headers end the stream, as browsers and curl send it.
 */
const overHttp2: SendRequest = (requestPath, method, headers, body, baseUrl = server.baseUrl) =>
  new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl, { ca: certificate });
    session.on('error', reject);
    const stream = session.request(
      { ':method': method, ':path': requestPath, ...headers },
      { endStream: body === undefined },
    );
    const chunks: Buffer[] = [];
    let status = 0;
    let responseHeaders: Record<string, unknown> = {};
    stream.on('response', (received) => {
      status = Number(received[':status']);
      responseHeaders = received;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const protocol = session.alpnProtocol === 'h2' ? 'HTTP/2.0' : String(session.alpnProtocol);
      session.close();
      resolve({
        protocol,
        status,
        headers: pickHeaders(responseHeaders),
        body: Buffer.concat(chunks).toString('utf8'),
      });
    });
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });

describe('HTTP/2 with HTTP/1.1 fallback', () => {
  it.each([
    ['a profile', '/v1/users/me', 'GET', true],
    ['a missing resource', '/v1/nothing', 'GET', true],
    ['a wrong method', '/v1/users/me', 'DELETE', true],
    ['a missing token', '/api/users/me', 'GET', false],
    ['a health probe', '/healthz', 'GET', false],
  ])('gives %s the same answer over both protocols', async (_name, requestPath, method, authenticated) => {
    const headers: Record<string, string> = { 'x-request-id': `same-answer-${requestPath.length}-${method}` };
    if (authenticated) headers.authorization = `Bearer ${token}`;
    const [first, second] = await Promise.all([
      overHttp1(requestPath, method, headers),
      overHttp2(requestPath, method, headers),
    ]);
    expect(first.protocol).toBe('HTTP/1.1');
    expect(second.protocol).toBe('HTTP/2.0');
    expect({ status: second.status, headers: second.headers, body: second.body }).toEqual({
      status: first.status,
      headers: first.headers,
      body: first.body,
    });
  });

  it.each([
    ['a JSON body', '{"trip_id": 5}', { 'content-type': 'application/json' }],
    ['a malformed JSON body', '{"trip_id": ', { 'content-type': 'application/json' }],
    ['a body of another type', 'trip=5', { 'content-type': 'text/plain' }],
    ['no body', undefined, {}],
  ])('reads %s over HTTP/2 without Content-Length as over HTTP/1.1', async (_name, body, bodyHeaders) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'idempotency-key': 'http2-body-without-length',
      'x-request-id': `body-${body?.length ?? 'none'}`,
      ...bodyHeaders,
    };
    const [first, second] = await Promise.all([
      overHttp1('/v1/bookings', 'POST', headers, body),
      overHttp2('/v1/bookings', 'POST', headers, body),
    ]);
    expect(first.status).toBeGreaterThanOrEqual(400);
    expect({ status: second.status, body: second.body }).toEqual({ status: first.status, body: first.body });
  });

  it('signs in over HTTP/2 without Content-Length as over HTTP/1.1', async () => {
    const identityProvider = {
      login: ({ email }: { email: string }) => Promise.resolve({ access_token: `token-for-${email}` }),
    } as unknown as IdentityProvider;
    const authApp = new Koa();
    // Password sign-in never reaches the authorization server.
    const authorizationServer = {
      provider: () => Promise.reject(new Error('not used by password sign-in')),
      redirectSources: () => [],
      pinOrigin: () => undefined,
    } as AuthorizationServer;
    authApp.use(identityProviderRouter(identityProvider, authorizationServer).routes());
    const authServer = await startServer(authApp, tlsFiles);
    try {
      const body = JSON.stringify({ email: 'ana@example.com', password: 'a-long-password' });
      const headers = { 'content-type': 'application/json' };
      const overBoth = (send: SendRequest) =>
        send('/api/auth/login', 'POST', headers, body, authServer.baseUrl);
      const [first, second] = await Promise.all([overBoth(overHttp1), overBoth(overHttp2)]);
      expect(first).toMatchObject({ status: 200, body: '{"access_token":"token-for-ana@example.com"}' });
      expect({ status: second.status, body: second.body }).toEqual({
        status: first.status,
        body: first.body,
      });
    } finally {
      await authServer.close();
    }
  });

  it('serves the caller’s profile over HTTP/2', async () => {
    const answer = await overHttp2('/v1/users/me', 'GET', { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ id: customer.id, email: customer.email });
  });
});
