// A standard OAuth client over fetch: form-encoded token requests, PKCE, and a browser's cookies and manual redirects.
import { createHash, randomBytes } from 'node:crypto';

const requestTimeoutMs = 30_000;

/** An answer with its JSON body parsed (or the text, for pages) and its headers. */
export interface OAuthAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

async function answerOf(response: Response): Promise<OAuthAnswer> {
  const text = await response.text();
  const isJson = /json/.test(response.headers.get('content-type') ?? '');
  return {
    status: response.status,
    headers: response.headers,
    body: isJson && text !== '' ? (JSON.parse(text) as Record<string, unknown>) : {},
    text,
  };
}

/** POSTs `fields` form-encoded, as RFC 6749 §4 has clients do, with HTTP Basic client authentication if given. */
export async function postForm(
  url: string,
  fields: Record<string, string>,
  options: { basic?: { clientId: string; clientSecret: string }; headers?: Record<string, string> } = {},
): Promise<OAuthAnswer> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    ...options.headers,
  };
  if (options.basic !== undefined) {
    // RFC 6749 §2.3.1: both parts form-encoded before Base64.
    const user = encodeURIComponent(options.basic.clientId);
    const secret = encodeURIComponent(options.basic.clientSecret);
    headers.authorization = `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
  }
  return answerOf(
    await fetch(url, {
      method: 'POST',
      headers,
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(requestTimeoutMs),
    }),
  );
}

/** An RFC 7636 S256 code verifier and its challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A browser's cookies (by name; the provider's paths keep them apart anyway) and redirects followed by hand. */
export class Browser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly origin: string) {}

  private remember(response: Response): void {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair, ...attributes] = cookie.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const expired = attributes.some((attribute) => /^\s*expires=Thu, 01 Jan 1970/i.test(attribute));
      if (expired || pair.slice(separator + 1) === '') this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(separator + 1));
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  /** One request, no redirect followed; relative URLs are taken from the origin. */
  async request(
    url: string,
    init: { method?: string; form?: Record<string, string>; accept?: string } = {},
  ): Promise<OAuthAnswer> {
    const headers: Record<string, string> = { accept: init.accept ?? 'text/html' };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    if (init.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(new URL(url, this.origin), {
      method: init.method ?? (init.form === undefined ? 'GET' : 'POST'),
      headers,
      body: init.form === undefined ? undefined : new URLSearchParams(init.form).toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    this.remember(response);
    return answerOf(response);
  }
}

/** The Location of a redirect, resolved against `base`. */
export function locationOf(answer: OAuthAnswer, base: string): URL {
  const location = answer.headers.get('location');
  if (location === null) throw new Error(`expected a redirect, got ${answer.status}: ${answer.text}`);
  return new URL(location, base);
}
