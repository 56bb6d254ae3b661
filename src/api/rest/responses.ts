// A response as plain data (status, headers, body): handlers return it, idempotent replays store and resend it.
import type Koa from 'koa';

export interface RestResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: unknown;
}

/** A JSON body already serialized and encoded: sent as these bytes. */
export class SerializedJson {
  readonly bytes: Buffer;

  constructor(text: string) {
    this.bytes = Buffer.from(text);
  }

  toJSON(): unknown {
    return JSON.parse(this.bytes.toString());
  }
}

const serializedViews = new WeakMap<object, SerializedJson>();

/**
 * The JSON of `render()`, made once per `view` object: a cached read (the route catalogue) answered to many
 * requests is mapped to its contract shape and serialized the first time only.
 */
export function serializedOnce(view: object, render: () => unknown): SerializedJson {
  let serialized = serializedViews.get(view);
  if (serialized === undefined) {
    serialized = new SerializedJson(JSON.stringify(render()));
    serializedViews.set(view, serialized);
  }
  return serialized;
}

/**
 * Objects are serialized and encoded here, once: left to Koa, a JSON body is serialized twice (once to measure its
 * length, which the compression threshold asks for, and once to send it), and a text body is encoded twice (to
 * count its bytes for Content-Length, and again when written to the socket).
 */
export function sendResponse(context: Koa.Context, response: RestResponse): void {
  context.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) context.set(name, value);
  const { body } = response;
  if (body instanceof SerializedJson) {
    if (!context.response.get('Content-Type')) context.type = 'json';
    context.body = body.bytes;
  } else if (body !== null && body !== undefined && typeof body === 'object' && !Buffer.isBuffer(body)) {
    if (!context.response.get('Content-Type')) context.type = 'json';
    context.body = Buffer.from(JSON.stringify(body));
  } else {
    context.body = body;
  }
}
