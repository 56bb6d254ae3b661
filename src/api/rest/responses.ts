// A response as plain data (status, headers, body): handlers return it, idempotent replays store and resend it.
import type Koa from 'koa';

export interface RestResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: unknown;
}

export function sendResponse(context: Koa.Context, response: RestResponse): void {
  context.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) context.set(name, value);
  context.body = response.body;
}
