// Security headers on every answer (documents' and data's), error answers included, and CORS only for the configured origins.
import Koa from 'koa';
import request from 'supertest';
import { securityMiddleware } from '../../../src/api/rest/security-middleware';
import { DomainError } from '../../../src/domain/errors';

function appWith(corsOrigins: string[], codecCorsOrigins: string[] = []) {
  const app = new Koa();
  app.use(async (context, next) => {
    try {
      await next();
    } catch (error) {
      context.status = error instanceof DomainError ? error.mapping.httpStatus : 500;
      context.body = { code: error instanceof DomainError ? error.code : 'INTERNAL' };
    }
  });
  app.use(securityMiddleware({ corsOrigins, codecCorsOrigins }));
  app.use((context) => {
    if (context.path === '/fails') throw new DomainError('NOT_FOUND', 'No resource at /fails');
    context.body = { ok: true };
  });
  return app.callback();
}

describe('securityMiddleware', () => {
  it('sets the API’s security headers on successful and failed data answers', async () => {
    for (const path of ['/ok', '/fails', '/openapi.yaml', '/docsearch']) {
      const response = await request(appWith([])).get(path);
      expect(response.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['strict-transport-security']).toMatch(/max-age=/);
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['cross-origin-resource-policy']).toBe('same-origin');
      // The headers that only govern how a browser treats an HTML page are left to documents.
      expect(response.headers['cross-origin-opener-policy']).toBeUndefined();
      expect(response.headers['x-dns-prefetch-control']).toBeUndefined();
      expect(response.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('sets helmet’s document headers on the documentation pages', async () => {
    for (const path of ['/docs', '/docs/swagger-ui-bundle.js']) {
      const response = await request(appWith([])).get(path);
      expect(response.headers['content-security-policy']).toContain("default-src 'self'");
      expect(response.headers['content-security-policy']).toContain("script-src 'self'");
      expect(response.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['strict-transport-security']).toMatch(/max-age=/);
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['cross-origin-opener-policy']).toBe('same-origin');
      expect(response.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(response.headers['x-dns-prefetch-control']).toBe('off');
      expect(response.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('answers CORS for a configured origin, exposing the headers clients read', async () => {
    const response = await request(appWith(['https://app.example.com']))
      .get('/ok')
      .set('Origin', 'https://app.example.com');
    expect(response.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(response.headers['access-control-expose-headers']).toContain('ETag');
    expect(response.headers['access-control-expose-headers']).toContain('Retry-After');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('handles a preflight from a configured origin', async () => {
    const response = await request(appWith(['https://app.example.com']))
      .options('/v1/bookings')
      .set('Origin', 'https://app.example.com')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization, content-type, idempotency-key');
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-headers']).toContain('Authorization');
    expect(response.headers['access-control-allow-methods']).toContain('PATCH');
  });

  it('sends no CORS headers to other origins, nor to anyone when none are configured', async () => {
    const stranger = await request(appWith(['https://app.example.com']))
      .get('/ok')
      .set('Origin', 'https://evil.example');
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
    const none = await request(appWith([])).get('/ok').set('Origin', 'https://app.example.com');
    expect(none.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows any origin only when told to with *', async () => {
    const response = await request(appWith(['*']))
      .get('/ok')
      .set('Origin', 'https://anywhere.example');
    expect(response.headers['access-control-allow-origin']).toBe('https://anywhere.example');
  });

  it('allows the Temporal UI origins on the codec endpoint only, with the headers the UI sends', async () => {
    const app = appWith(['https://app.example.com'], ['http://localhost:8233']);
    const preflight = await request(app)
      .options('/codec/decode')
      .set('Origin', 'http://localhost:8233')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type, x-namespace, authorization');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:8233');
    expect(preflight.headers['access-control-allow-headers']).toContain('X-Namespace');

    const uiOnTheApi = await request(app).get('/v1/bookings').set('Origin', 'http://localhost:8233');
    expect(uiOnTheApi.headers['access-control-allow-origin']).toBeUndefined();
    const appOnTheCodec = await request(app).post('/codec/decode').set('Origin', 'https://app.example.com');
    expect(appOnTheCodec.headers['access-control-allow-origin']).toBeUndefined();
  });
});
