// IDP_CLIENTS: the embedded authorization server's OAuth clients, a JSON array checked entry by entry.
import { roles as knownRoleNames, type Role } from '../domain/roles';
import { ConfigError } from './settings';

export const oauthClientKinds = ['web', 'native', 'service'] as const;

/**
 * A client of the embedded authorization server. `web` and `native` apps sign people in with authorization code and
 * PKCE (public clients, no secret); a `service` authenticates with its secret and gets client-credentials tokens
 * carrying the scopes and roles listed here.
 */
export type OAuthClientRegistration =
  | { kind: 'web' | 'native'; clientId: string; redirectUris: string[] }
  | { kind: 'service'; clientId: string; clientSecret: string; scopes: string[]; roles: Role[] };

/** The client id Swagger UI at /docs signs in with. */
export const docsClientId = 'bus-booking-docs';

const clientIdPattern = /^[A-Za-z0-9._-]{1,64}$/;
const scopePattern = /^[!#-[\]-~]+$/;

function stringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string' && item !== '');
}

function absoluteUri(value: string): boolean {
  // A native app's private-use scheme (com.example.app:/callback) is as valid here as an https URL.
  return URL.canParse(value) && !value.includes('#');
}

/** IDP_CLIENTS: a JSON array of `{client_id, kind, redirect_uris}` or `{client_id, kind: "service", client_secret, scopes, roles}`. */
export function parseOauthClients(raw: string, variable: string): OAuthClientRegistration[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(variable, 'must be a JSON array of client registrations');
  }
  if (!Array.isArray(parsed)) throw new ConfigError(variable, 'must be a JSON array of client registrations');
  const seen = new Set<string>([docsClientId]);
  return parsed.map((entry: unknown, index): OAuthClientRegistration => {
    const fail = (problem: string) => new ConfigError(variable, `entry ${index}: ${problem}`);
    if (typeof entry !== 'object' || entry === null) throw fail('must be an object');
    const fields = entry as Record<string, unknown>;
    const clientId = fields.client_id;
    if (typeof clientId !== 'string' || !clientIdPattern.test(clientId)) {
      throw fail('client_id must be 1 to 64 letters, digits, dots, dashes or underscores');
    }
    if (seen.has(clientId)) throw fail(`client_id "${clientId}" is registered twice`);
    seen.add(clientId);
    const kind = fields.kind;
    if (kind === 'web' || kind === 'native') {
      const redirectUris = fields.redirect_uris;
      if (!stringList(redirectUris) || redirectUris.length === 0 || !redirectUris.every(absoluteUri)) {
        throw fail('redirect_uris must list absolute URIs without fragments');
      }
      if (kind === 'web' && redirectUris.some((uri) => !/^https?:/.test(uri))) {
        throw fail("a web client's redirect_uris must be http(s) URLs");
      }
      return { kind, clientId, redirectUris };
    }
    if (kind === 'service') {
      const { client_secret: clientSecret, scopes, roles } = fields;
      if (typeof clientSecret !== 'string' || clientSecret.length < 32) {
        throw fail('client_secret must be at least 32 characters');
      }
      if (!stringList(scopes) || !scopes.every((scope) => scopePattern.test(scope))) {
        throw fail('scopes must be a list of scope names');
      }
      const roleList = roles ?? [];
      if (
        !stringList(roleList) ||
        !roleList.every((role) => (knownRoleNames as readonly string[]).includes(role))
      ) {
        throw fail(`roles must list some of ${knownRoleNames.join(', ')}`);
      }
      return { kind, clientId, clientSecret, scopes, roles: roleList as Role[] };
    }
    throw fail(`kind must be one of ${oauthClientKinds.join(', ')}`);
  });
}
