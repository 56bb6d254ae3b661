// Swagger UI and the OpenAPI document: served from files read at start, the page with helmet's document headers.
import Koa from 'koa';
import request from 'supertest';
import { documentationRouter } from '../../../src/api/rest/docs';
import { securityMiddleware } from '../../../src/api/rest/security-middleware';

function documentationApp() {
  const app = new Koa();
  app.use(securityMiddleware({ corsOrigins: [] }));
  const router = documentationRouter();
  app.use(router.routes());
  return app.callback();
}

describe('documentationRouter', () => {
  it('serves the Swagger UI page and every asset it loads, under a CSP that allows them', async () => {
    const app = documentationApp();
    const page = await request(app).get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(assets).toHaveLength(5);
    for (const asset of assets) {
      const response = await request(app).get(asset);
      expect(response.status).toBe(200);
      expect(response.headers['cache-control']).toBe('public, max-age=86400');
    }
  });

  it('serves the OpenAPI document as data, and nothing for an unknown asset', async () => {
    const app = documentationApp();
    const document = await request(app).get('/openapi.yaml');
    expect(document.status).toBe(200);
    expect(document.text).toMatch(/^openapi: /m);
    expect(document.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect((await request(app).get('/docs/unknown.js')).status).toBe(404);
  });

  it('gives the docs page the document with its own origin as the first server, and clients the embedded stack first', async () => {
    const app = documentationApp();
    const forThePage = await request(app).get('/docs/openapi.json');
    expect(forThePage.status).toBe(200);
    const pageServers = (forThePage.body as { servers: { url: string }[] }).servers.map(
      (server) => server.url,
    );
    expect(pageServers).toEqual(['/', 'http://localhost:8080']);
    expect((await request(app).get('/openapi.yaml')).text).toMatch(
      /^servers:\n {2}- url: http:\/\/localhost:8080$/m,
    );
    expect((await request(app).get('/docs/initializer.js')).text).toContain("url: '/docs/openapi.json'");
  });
});
