// A codec server on 127.0.0.1 without authentication, for demos that run the Temporal Web UI but not the API.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { bodyParser } from '@koa/bodyparser';
import cors from '@koa/cors';
import Router from '@koa/router';
import type { DataConverter } from '@temporalio/common';
import Koa from 'koa';
import { codecRequestHeaders, createCodecHandlers } from '../../src/api/rest/codec-endpoint';
import { problemDetails } from '../../src/api/rest/problem-details';
import type { Logger } from '../../src/logger';

export interface RunningCodecServer {
  /** What `--ui-codec-endpoint` is given: the UI appends `/decode` and `/encode`. */
  url: string;
  stop(): Promise<void>;
}

/** Payload batches of a workflow page stay far below this; the API's own limit is no tighter. */
const bodyLimit = '4mb';

/**
 * The API's codec handlers behind no token: only a process on this machine can reach the socket, and only the
 * given origins (the demo's Web UI) may read its answers from a browser. The demo's keys are throwaway keys.
 */
export async function startLoopbackCodecServer(options: {
  dataConverter: DataConverter;
  /** Chosen before the Web UI starts, which is given the URL; 0 picks a free one. */
  port: number;
  allowedOrigins: readonly string[];
  logger: Logger;
}): Promise<RunningCodecServer> {
  const handlers = createCodecHandlers(options.dataConverter);
  const router = new Router({ prefix: '/codec' });
  for (const [route, operationId] of [
    ['/decode', 'decodePayloads'],
    ['/encode', 'encodePayloads'],
  ] as const) {
    router.post(route, async (context) => {
      const response = await handlers[operationId]({ body: context.request.body ?? {} });
      context.status = response.status;
      context.set(response.headers ?? {});
      context.body = response.body;
    });
  }
  const app = new Koa();
  app.use(problemDetails(options.logger));
  app.use(
    cors({
      origin: (context) =>
        options.allowedOrigins.includes(context.get('Origin')) ? context.get('Origin') : '',
      allowMethods: ['POST'],
      allowHeaders: ['Content-Type', ...codecRequestHeaders],
      credentials: false,
      maxAge: 600,
    }),
  );
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: bodyLimit, jsonStrict: true }));
  app.use(router.routes());
  app.use(router.allowedMethods());

  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(options.port, '127.0.0.1', () => resolve(listening));
    listening.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/codec`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
