// The person at the embedded provider's sign-in page, so the example runs unattended; an app opens a browser instead.

/** Email and password typed into the page; only the person and the provider ever see them, never the app. */
export interface PageCredentials {
  email: string;
  password: string;
}

const requestTimeoutMs = 30_000;

function decodeAttribute(value: string): string {
  return value
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/**
 * Opens the authorization URL as a browser would (cookies kept, redirects followed), fills in the sign-in form and
 * returns the URL the provider sends the browser back to: the redirect URI with `code` and `state`.
 */
export async function signInAtPage(
  authorizationUrl: URL,
  redirectUri: string,
  credentials: PageCredentials,
): Promise<URL> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 10; step += 1) {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (cookies.size > 0) headers.cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      headers,
      body: form?.toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(';', 1)[0] ?? '';
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) cookies.delete(name);
      else cookies.set(name, value);
    }
    form = undefined;
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) return next;
      url = next;
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`the sign-in page answered ${response.status}`);
    if (page.includes('id="sign-in-error"')) throw new Error(`the sign-in page refused ${credentials.email}`);
    const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
    if (action === undefined) throw new Error('no sign-in form on the page');
    url = new URL(decodeAttribute(action), url);
    form = new URLSearchParams({ email: credentials.email, password: credentials.password });
  }
  throw new Error('the sign-in did not come back to the redirect URI');
}
