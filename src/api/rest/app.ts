// Builds the Koa application: cross-cutting middleware, service endpoints, documentation and the /v1 routes.
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from '../../logger';
import type { ReadinessCheck } from '../../application/readiness';
import { documentationRouter } from './docs';
import { problemDetails, requestIdentity } from './problem-details';

export interface RestDependencies {
  logger: Logger;
  checkReadiness: ReadinessCheck;
}

function serviceRouter(dependencies: RestDependencies): Router {
  const router = new Router();
  router.get('/healthz', (context) => {
    context.body = { status: 'ok' };
  });
  router.get('/readyz', async (context) => {
    const readiness = await dependencies.checkReadiness();
    context.status = readiness.ready ? 200 : 503;
    if (!readiness.ready) context.set('Retry-After', '5');
    context.body = { status: readiness.ready ? 'ok' : 'unavailable', checks: readiness.checks };
  });
  return router;
}

export function createRestApp(dependencies: RestDependencies): Koa {
  const app = new Koa();
  app.proxy = true;
  app.use(requestIdentity());
  app.use(problemDetails(dependencies.logger));
  for (const router of [serviceRouter(dependencies), documentationRouter()]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
