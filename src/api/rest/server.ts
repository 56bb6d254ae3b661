// The HTTP server around the Koa app: HTTP/2 over TLS with HTTP/1.1 fallback when certificates are configured.
import http from 'node:http';
import http2 from 'node:http2';
import type Koa from 'koa';
import { readSettingFile } from '../../config';

export interface TlsFiles {
  certificateFile: string;
  keyFile: string;
}

export type RestServer = http.Server | http2.Http2SecureServer;

/**
 * Without TLS: plain HTTP/1.1 (a load balancer in front usually terminates TLS). With TLS: one port that
 * negotiates HTTP/2 by ALPN and still answers HTTP/1.1 clients (`allowHTTP1`).
 */
export function createRestServer(
  app: Koa,
  options: { tls?: TlsFiles; requestTimeoutMs: number },
): RestServer {
  const handle = app.callback();
  // Koa's handler answers its own failures (context.onerror), so the promise it returns is left to settle.
  const handleRequest = (...request: Parameters<typeof handle>): void => void handle(...request);
  if (options.tls === undefined) {
    const server = http.createServer(handleRequest);
    // Receiving a request may take this long at most; the app's own timeout bounds the work after that.
    server.requestTimeout = options.requestTimeoutMs;
    return server;
  }
  return http2.createSecureServer(
    {
      cert: readSettingFile('HTTP_TLS_CERT', options.tls.certificateFile),
      key: readSettingFile('HTTP_TLS_KEY', options.tls.keyFile),
      allowHTTP1: true,
    },
    handleRequest,
  );
}
