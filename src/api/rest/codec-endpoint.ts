// Temporal's codec-server protocol for operators: the Temporal UI and CLI decode (and encode) payloads here.
import { BlockList, isIPv4 } from 'node:net';
import type { DataConverter, Payload } from '@temporalio/common';
import { JSONToPayload, payloadToJSON, type JSONPayload } from '@temporalio/common/lib/proto-utils';
import type Koa from 'koa';
import { validationFailed } from '../../domain/errors';
import type { OperationRequest } from './operation-handlers';
import type { RestResponse } from './responses';

/** The codec endpoint the UI and CLI are given is `<origin>/codec`; they append `/decode` and `/encode`. */
export const codecPathPrefix = '/codec/';

export const codecOperationIds: ReadonlySet<string> = new Set(['decodePayloads', 'encodePayloads']);

/** Headers the Temporal UI sends to a codec server besides Authorization and Content-Type. */
export const codecRequestHeaders = ['X-Namespace'];

const loopbackAddresses = new BlockList();
loopbackAddresses.addSubnet('127.0.0.0', 8, 'ipv4');
loopbackAddresses.addAddress('::1', 'ipv6');

const proxyHeaders = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/** A caller on this machine talking to the socket directly: no proxy in between that could relay others. */
export function isDirectLoopbackRequest(context: Koa.Context): boolean {
  if (proxyHeaders.some((header) => context.get(header) !== '')) return false;
  const address = context.req.socket.remoteAddress ?? '';
  const unmapped = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return isIPv4(unmapped)
    ? loopbackAddresses.check(unmapped, 'ipv4')
    : loopbackAddresses.check(unmapped, 'ipv6');
}

/**
 * Development only: the embedded stack's Web UI calls the codec endpoint from the developer's browser without a
 * token. A request that carries a token is still verified, and a bad one still answers 401.
 */
export function allowingLoopbackWithoutToken(guard: Koa.Middleware): Koa.Middleware {
  return async (context, next) => {
    if (context.get('Authorization') === '' && isDirectLoopbackRequest(context)) await next();
    else await guard(context, next);
  };
}

type Transform = (payloads: Payload[]) => Promise<Payload[]>;

/** Payloads run through the data converter's codecs as the SDK runs them: encode in order, decode in reverse. */
function transforms(dataConverter: DataConverter): { encode: Transform; decode: Transform } {
  const codecs = dataConverter.payloadCodecs ?? [];
  return {
    async encode(payloads) {
      let encoded = payloads;
      for (const codec of codecs) encoded = await codec.encode(encoded);
      return encoded;
    },
    async decode(payloads) {
      let decoded = payloads;
      for (const codec of [...codecs].reverse()) decoded = await codec.decode(decoded);
      return decoded;
    },
  };
}

/** A codec operation reads only the body, so a demo's loopback codec server can run it without an actor. */
export type CodecHandler = (request: Pick<OperationRequest, 'body'>) => Promise<RestResponse>;

function handlerFor(transform: Transform): CodecHandler {
  return async ({ body }): Promise<RestResponse> => {
    // proto3 JSON leaves an empty list out: the CLI sends `{}` for a history event without payloads.
    const { payloads = [] } = body as { payloads?: JSONPayload[] };
    let result: Payload[];
    try {
      result = await transform(payloads.map((payload) => JSONToPayload(payload)));
    } catch (error) {
      // Unknown key id, tampered ciphertext: say which, never echo payload data.
      const message = error instanceof Error ? error.message : 'cannot be transformed';
      throw validationFailed([{ field: 'payloads', message }]);
    }
    return {
      status: 200,
      // Decoded payloads hold personal data: no cache may keep them.
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
      body: { payloads: result.map((payload) => payloadToJSON(payload)) },
    };
  };
}

/** Handlers of the two codec operations, over the same data converter the Temporal Clients and Workers use. */
export function createCodecHandlers(
  dataConverter: DataConverter,
): Record<'decodePayloads' | 'encodePayloads', CodecHandler> {
  const { encode, decode } = transforms(dataConverter);
  return { decodePayloads: handlerFor(decode), encodePayloads: handlerFor(encode) };
}
