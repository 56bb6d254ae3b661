// The demo's loopback codec server: decodes for the Web UI's origin only, on 127.0.0.1, in the project's error format.
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { payloadToJSON } from '@temporalio/common/lib/proto-utils';
import { startLoopbackCodecServer, type RunningCodecServer } from '../../../dev/stack/loopback-codec-server';
import { createLogger } from '../../../src/logger';
import { createAesKeyring } from '../../../src/security/field-encryption';
import { createPayloadEncryptionCodec } from '../../../src/security/temporal-payload-codec';

const uiOrigin = 'http://127.0.0.1:8233';
const codec = createPayloadEncryptionCodec(createAesKeyring({ demo: randomBytes(32) }, 'demo'));
const progress = { status: 'RUNNING', done: 400, remaining: 1600 };

describe('startLoopbackCodecServer', () => {
  let server: RunningCodecServer;

  beforeAll(async () => {
    server = await startLoopbackCodecServer({
      dataConverter: { payloadCodecs: [codec] },
      port: 0,
      allowedOrigins: [uiOrigin],
      logger: createLogger({ level: 'silent', name: 'test' }),
    });
  });

  afterAll(() => server.stop());

  it('listens on the loopback address only', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/codec$/);
  });

  it('decodes the payloads the worker encrypted, for the Web UI without a token', async () => {
    const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload(progress)]);
    const response = await fetch(`${server.url}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: uiOrigin, 'x-namespace': 'default' },
      body: JSON.stringify({ payloads: [payloadToJSON(encrypted)] }),
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const { payloads } = (await response.json()) as { payloads: { data: string }[] };
    expect(JSON.parse(Buffer.from(payloads[0].data, 'base64').toString('utf8'))).toEqual(progress);
  });

  it("answers the Web UI's preflight, and no other origin's", async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace',
        },
      });

    const allowed = await preflight(uiOrigin);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-namespace');
    const other = await preflight('https://elsewhere.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a payload it cannot decrypt in the error format, without echoing it', async () => {
    const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload(progress)]);
    const tampered = {
      ...payloadToJSON(encrypted),
      data: Buffer.from('not a sealed payload').toString('base64'),
    };
    const response = await fetch(`${server.url}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [tampered] }),
    });

    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const body = await response.text();
    expect(body).toContain('VALIDATION_FAILED');
    expect(body).not.toContain(tampered.data);
  });
});
