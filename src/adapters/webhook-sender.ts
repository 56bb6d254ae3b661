// WebhookSender over node:http: one signed Standard Webhooks POST per attempt, through the outbound guard.
import http from 'node:http';
import type net from 'node:net';
import { Webhook } from 'standardwebhooks';
import { parseRetryAfter } from '../domain/webhook-retries';
import type { WebhookRequest, WebhookSender, WebhookSendResult } from '../ports/webhooks';
import {
  asError,
  createOutboundGuard,
  OutboundRefusedError,
  type Connector,
  type Resolver,
} from './outbound-guard';

export interface WebhookSenderOptions {
  /** Host names, addresses and CIDR ranges the outbound guard lets through (loopback receivers in development). */
  allowList?: readonly string[];
  /** The whole attempt, resolving and connecting included, up to the response's status line and headers. */
  timeoutMs?: number;
  resolver?: Resolver;
  connector?: Connector;
  userAgent?: string;
}

export const defaultWebhookTimeoutMs = 15_000;
/** A receiver's answer is read up to this and dropped: only its status counts, and a huge body costs memory. */
const maxResponseBytes = 64 * 1024;

class AttemptTimeout extends Error {
  override readonly name = 'AttemptTimeout';
}

interface Answer {
  statusCode: number;
  retryAfter?: string;
}

export function createWebhookSender(options: WebhookSenderOptions = {}): WebhookSender {
  const guard = createOutboundGuard({
    ...(options.allowList !== undefined ? { allowList: options.allowList } : {}),
    ...(options.resolver !== undefined ? { resolver: options.resolver } : {}),
    ...(options.connector !== undefined ? { connector: options.connector } : {}),
  });
  const timeoutMs = options.timeoutMs ?? defaultWebhookTimeoutMs;
  const userAgent = options.userAgent ?? 'bus-booking-service-webhooks';

  async function send(request: WebhookRequest): Promise<WebhookSendResult> {
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    if (!URL.canParse(request.url)) {
      return { outcome: 'refused', error: 'not an absolute URL', durationMs: durationMs() };
    }
    const url = new URL(request.url);
    const signature = signatureOf(request);
    if ('error' in signature) return { outcome: 'failed', error: signature.error, durationMs: durationMs() };

    const body = Buffer.from(request.payload, 'utf8');
    const headers = {
      host: url.host,
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': userAgent,
      'webhook-id': request.messageId,
      'webhook-timestamp': String(Math.floor(request.timestamp.getTime() / 1000)),
      'webhook-signature': signature.value,
    };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeout('timeout')), timeoutMs);
    let answer: Answer;
    try {
      const socket = await guard.connect(url, controller.signal);
      answer = await post(socket, url, headers, body, controller.signal);
    } catch (error) {
      if (error instanceof OutboundRefusedError) {
        return { outcome: 'refused', error: error.message, durationMs: durationMs() };
      }
      if (controller.signal.aborted) return { outcome: 'failed', error: 'timeout', durationMs: durationMs() };
      return { outcome: 'failed', error: networkError(error), durationMs: durationMs() };
    } finally {
      clearTimeout(timer);
    }
    return classify(answer, durationMs());
  }

  return { send };
}

/** One `v1,…` signature per secret, space-separated: during a rotation the receiver may know either secret. */
function signatureOf(request: WebhookRequest): { value: string } | { error: string } {
  if (request.secrets.length === 0) return { error: 'no signing secret' };
  try {
    return {
      value: request.secrets
        .map((secret) => new Webhook(secret).sign(request.messageId, request.timestamp, request.payload))
        .join(' '),
    };
  } catch {
    return { error: 'a signing secret is not whsec_ and base64' };
  }
}

function classify(answer: Answer, durationMs: number): WebhookSendResult {
  const { statusCode } = answer;
  if (statusCode >= 200 && statusCode < 300) return { outcome: 'delivered', statusCode, durationMs };
  if (statusCode === 410) return { outcome: 'gone', statusCode, durationMs };
  if (statusCode === 429 || statusCode === 503) {
    const retryAfterSeconds = parseRetryAfter(answer.retryAfter, new Date());
    return {
      outcome: 'failed',
      statusCode,
      error: `HTTP ${statusCode}`,
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      durationMs,
    };
  }
  if (statusCode >= 300 && statusCode < 400) {
    return {
      outcome: 'failed',
      statusCode,
      error: `HTTP ${statusCode}: redirects are not followed`,
      durationMs,
    };
  }
  return { outcome: 'failed', statusCode, error: `HTTP ${statusCode}`, durationMs };
}

/** The error's code and first line, for the delivery log: never a stack. */
function networkError(error: unknown): string {
  // Node's own errors are matched by shape: under a test runner's sandbox they are no `instanceof Error`.
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
  };
  const line = typeof message === 'string' ? message.split('\n')[0] : '';
  const codeText = typeof code === 'string' ? code : '';
  const text = codeText !== '' && !line.includes(codeText) ? `${codeText}: ${line}` : line || codeText;
  return (text || 'network error').slice(0, 200);
}

/**
 * POSTs over the guard's socket and waits for the status and headers, then reads the body up to its end, a bound, or
 * the deadline, whichever comes first. The socket is closed after the one exchange.
 */
function post(
  socket: net.Socket,
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  signal: AbortSignal,
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let answer: Answer | undefined;
    let settled = false;
    // Once the status is in, whatever ends the exchange (the body's end, the bound, an error, the deadline) settles
    // it with that status; before, an error or the deadline fails it.
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      request.destroy();
      socket.destroy();
      if (answer !== undefined) resolve(answer);
      else reject(error ?? new Error('no answer'));
    };
    const onAbort = () => settle(asError(signal.reason));
    const request = http.request({
      method: 'POST',
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      createConnection: () => socket,
    });
    request.on('response', (response) => {
      const retryAfter = response.headers['retry-after'];
      answer = { statusCode: response.statusCode ?? 0, ...(retryAfter !== undefined ? { retryAfter } : {}) };
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes >= maxResponseBytes) settle();
      });
      response.on('end', () => settle());
      response.on('error', settle);
      response.on('close', () => settle());
    });
    request.on('error', settle);
    request.on('close', () => settle(new Error('connection closed without an answer')));
    signal.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}
