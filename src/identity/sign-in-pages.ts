// Server-rendered pages of the authorization server: the sign-in form and the error page, plain HTML with no script.
import { createHash } from 'node:crypto';
import escapeHtml from 'escape-html';

/** The pages' only style, inline and allowed by its hash, so the page needs no other request and no script. */
const pageStyle = `body{font-family:system-ui,sans-serif;margin:0;padding:2rem 1rem;background:#f6f7f9;color:#1b1f24}
main{max-width:24rem;margin:0 auto;background:#fff;padding:1.5rem 2rem;border-radius:.5rem;border:1px solid #c9ced6}
h1{font-size:1.5rem;margin-top:0}label{display:block;font-weight:600;margin-top:1rem}
input{box-sizing:border-box;width:100%;font-size:1rem;padding:.5rem;margin-top:.25rem;border:1px solid #6b7280;border-radius:.25rem}
input:focus,button:focus{outline:3px solid #1d4ed8;outline-offset:2px}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
button{font-size:1rem;padding:.5rem 1rem;border-radius:.25rem;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1d4ed8}
.error{border:2px solid #b91c1c;color:#7f1d1d;background:#fef2f2;padding:.75rem;border-radius:.25rem}`;

/** The `style-src` source that admits `pageStyle` and nothing else. */
const pageStyleSource = `'sha256-${createHash('sha256').update(pageStyle, 'utf8').digest('base64')}'`;

/**
 * The Content-Security-Policy of these pages: their one inline style, and form posts to this server and to the
 * `formTargets` (origins or schemes of the client's redirect URIs), since browsers apply form-action to every
 * redirect after a post and a sign-in ends with one to the client.
 */
export function pageContentSecurityPolicy(formTargets: readonly string[] = []): string {
  return [
    "default-src 'none'",
    `style-src ${pageStyleSource}`,
    ["form-action 'self'", ...formTargets].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${pageStyle}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export interface SignInPage {
  /** Where the form posts: the interaction's login action. */
  loginAction: string;
  /** Where "Cancel" posts: the interaction's abort action. */
  abortAction: string;
  /** The application asking, as its registration names it. */
  clientName: string;
  /** The email typed before a failed attempt, so it need not be typed again. */
  email?: string;
  /** Why the last attempt failed. */
  error?: string;
}

export function signInPage(form: SignInPage): string {
  const error =
    form.error === undefined
      ? ''
      : `<p class="error" id="sign-in-error" role="alert">${escapeHtml(form.error)}</p>\n`;
  const describedBy = form.error === undefined ? '' : ' aria-describedby="sign-in-error"';
  return page(
    'Sign in – Bus booking',
    `<h1>Sign in</h1>
<p>${escapeHtml(form.clientName)} asks you to sign in to your bus booking account.</p>
${error}<form method="post" action="${escapeHtml(form.loginAction)}" novalidate>
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(form.email ?? '')}"${describedBy}${form.error === undefined ? ' autofocus' : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${describedBy}${form.error === undefined ? '' : ' autofocus'}>
<div class="actions">
<button type="submit">Sign in</button>
<button type="submit" class="secondary" formaction="${escapeHtml(form.abortAction)}">Cancel</button>
</div>
</form>`,
  );
}

/** An OAuth error shown to a person: RFC 6749's code and description, and what to do next. */
export function errorPage(error: { error: string; error_description?: string }): string {
  return page(
    'Sign-in failed – Bus booking',
    `<h1>Sign-in failed</h1>
<p class="error" role="alert"><strong>${escapeHtml(error.error)}</strong>${
      error.error_description === undefined ? '' : `: ${escapeHtml(error.error_description)}`
    }</p>
<p>Go back to the application and start signing in again.</p>`,
  );
}
