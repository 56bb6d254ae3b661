// Serves the OpenAPI document at /openapi.yaml and Swagger UI at /docs, from files read once at start.
import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import { parse } from 'yaml';
import { docsClientId } from '../../config';
import { openApiDocumentPath, openApiOperations } from '../../contracts/openapi-document';

/** Where Swagger UI's page and assets are served: the API's only HTML documents. */
const documentationPath = '/docs';

/** Whether a request is for Swagger UI's page or one of its assets; everything else the API answers is data. */
export function isDocumentationPath(requestPath: string): boolean {
  return requestPath === documentationPath || requestPath.startsWith(`${documentationPath}/`);
}

const swaggerAssets: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  // Where the embedded authorization server sends the docs page's sign-in back (its registered redirect URI).
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'application/javascript; charset=utf-8',
};

const swaggerPage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Bus booking API</title>
  <link rel="stylesheet" href="${documentationPath}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${documentationPath}/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${documentationPath}/swagger-ui-bundle.js"></script>
  <script src="${documentationPath}/swagger-ui-standalone-preset.js"></script>
  <script src="${documentationPath}/initializer.js"></script>
</body>
</html>
`;

/** Every scope the REST operations use, ticked in the Authorize dialog so a sign-in can try any of them. */
const documentedScopes = [...new Set(openApiOperations.flatMap((operation) => operation.scopes))].sort();

// Kept out of the page itself so a strict Content-Security-Policy (no inline scripts) still allows the docs.
// Swagger UI would look for its redirect page beside /docs, at /oauth2-redirect.html, without the explicit URL.
const swaggerInitializer = `window.ui = SwaggerUIBundle({
  url: '${documentationPath}/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  oauth2RedirectUrl: window.location.origin + '${documentationPath}/oauth2-redirect.html',
});
window.ui.initOAuth({
  clientId: ${JSON.stringify(docsClientId)},
  usePkceWithAuthorizationCodeGrant: true,
  scopes: ${JSON.stringify(['openid', ...documentedScopes])},
});
`;

/**
 * The document as the docs page reads it: the origin serving the page comes first among the servers, so "Try it
 * out" and the sign-in go where the page is; the published document leads with the embedded stack's URL, which
 * is what generated clients take as their base URL.
 */
function documentForThePage(document: Buffer) {
  const parsed = parse(document.toString('utf8')) as { servers?: { url: string }[] };
  const servers = parsed.servers ?? [];
  const pageOrigin = servers.filter((server) => server.url === '/');
  parsed.servers = [...pageOrigin, ...servers.filter((server) => server.url !== '/')];
  return Buffer.from(JSON.stringify(parsed));
}

export function documentationRouter(): Router {
  const document = fs.readFileSync(openApiDocumentPath);
  const assetDirectory = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const assets = new Map(
    Object.entries(swaggerAssets).map(([name, type]) => [
      name,
      { type, body: fs.readFileSync(path.join(assetDirectory, name)) },
    ]),
  );
  assets.set('openapi.json', {
    type: 'application/json; charset=utf-8',
    body: documentForThePage(document),
  });
  assets.set('initializer.js', {
    type: 'application/javascript; charset=utf-8',
    body: Buffer.from(swaggerInitializer),
  });

  const router = new Router();
  router.get('/openapi.yaml', (context) => {
    context.type = 'application/yaml';
    context.set('Cache-Control', 'public, max-age=300');
    context.body = document;
  });
  router.get(documentationPath, (context) => {
    context.type = 'text/html; charset=utf-8';
    context.body = swaggerPage;
  });
  router.get(`${documentationPath}/:asset`, (context, next) => {
    const asset = assets.get(context.params.asset);
    if (!asset) return next();
    context.type = asset.type;
    context.set('Cache-Control', 'public, max-age=86400');
    context.body = asset.body;
  });
  return router;
}
