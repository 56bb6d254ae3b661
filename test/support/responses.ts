// Typed reads of HTTP answers: supertest hands bodies over as `any`; a test names the shape it expects to read.
import type { Response } from 'supertest';

/** A supertest answer whose body the test reads as `Body`; its own assertions check that it is one. */
export type AnswerOf<Body> = Omit<Response, 'body'> & { body: Body };

/** Awaits a supertest request and types its body. */
export async function answerOf<Body>(pending: PromiseLike<Response>): Promise<AnswerOf<Body>> {
  // supertest types the body as `any`, which TypeScript lets stand for any shape: no cast, and no check either.
  return await pending;
}

/** The embedded identity provider's login and refresh answer. */
export type TokenAnswer = {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
};

/** The project's problem+json error body. */
export type ProblemAnswer = {
  type?: string;
  title?: string;
  status: number;
  code: string;
  detail?: string;
  instance?: string;
  request_id?: string;
  errors?: { field: string; message: string }[];
};

/** A login or refresh answer: tokens on 200, a problem otherwise (tests check the status first). */
export type TokenOrProblemAnswer = TokenAnswer & Partial<ProblemAnswer>;

/** A JSON Web Key Set as `/.well-known/jwks.json` serves it. */
export type KeySetAnswer = { keys: ({ kid: string } & Record<string, unknown>)[] };

/** A JSON answer of a REST API a test reaches over the network (a process it started), with its headers. */
export interface JsonAnswer<Body> {
  status: number;
  body: Body;
  headers: Headers;
}

/** One JSON call to `baseUrl`: bearer token, JSON body and any extra headers; bounded in time. */
export async function fetchJson<Body>(
  baseUrl: string,
  method: string,
  pathname: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonAnswer<Body>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${baseUrl}${pathname}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: response.status, body: (await response.json()) as Body, headers: response.headers };
}
