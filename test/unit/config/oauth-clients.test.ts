// IDP_CLIENTS and IDP_DOCS_CLIENT: the authorization server's clients as configured, and the failures naming them.
import { expect } from '@jest/globals';
import { loadConfig } from '../../../src/config';

/** The variables loadConfig requires; the values are never used to encrypt anything here. */
const required = {
  DATABASE_URL: 'postgres://localhost/db',
  ENCRYPTION_KEYS: 'k',
  ENCRYPTION_ACTIVE_KEY_ID: 'k',
  BLIND_INDEX_KEY: 'b',
};

const clientsOf = (environment: Record<string, string>) =>
  loadConfig({ ...required, ...environment }).auth.embedded;

describe('OAuth client registrations', () => {
  it('registers the docs page by default and no other client', () => {
    expect(clientsOf({})).toMatchObject({ docsClient: true, clients: [] });
    expect(clientsOf({ IDP_DOCS_CLIENT: 'false' })).toMatchObject({ docsClient: false });
  });

  it('reads web, native and service clients', () => {
    const secret = 's'.repeat(32);
    const embedded = clientsOf({
      IDP_CLIENTS: JSON.stringify([
        { client_id: 'web-app', kind: 'web', redirect_uris: ['https://app.example.com/callback'] },
        { client_id: 'mobile-app', kind: 'native', redirect_uris: ['com.example.app:/callback'] },
        {
          client_id: 'seat-sync',
          kind: 'service',
          client_secret: secret,
          scopes: ['seats:write'],
          roles: ['admin'],
        },
        { client_id: 'reporter', kind: 'service', client_secret: secret, scopes: ['routes:read'] },
      ]),
    });
    expect(embedded?.clients).toEqual([
      { kind: 'web', clientId: 'web-app', redirectUris: ['https://app.example.com/callback'] },
      { kind: 'native', clientId: 'mobile-app', redirectUris: ['com.example.app:/callback'] },
      {
        kind: 'service',
        clientId: 'seat-sync',
        clientSecret: secret,
        scopes: ['seats:write'],
        roles: ['admin'],
      },
      { kind: 'service', clientId: 'reporter', clientSecret: secret, scopes: ['routes:read'], roles: [] },
    ]);
  });

  it.each([
    ['not JSON', '{'],
    ['not an array', '{}'],
    ['no client_id', '[{"kind":"web","redirect_uris":["https://a.example/cb"]}]'],
    [
      'the docs client id',
      '[{"client_id":"bus-booking-docs","kind":"web","redirect_uris":["https://a.example/cb"]}]',
    ],
    ['an unknown kind', '[{"client_id":"x","kind":"spa","redirect_uris":["https://a.example/cb"]}]'],
    ['no redirect URI', '[{"client_id":"x","kind":"web","redirect_uris":[]}]'],
    [
      'a fragment in a redirect URI',
      '[{"client_id":"x","kind":"web","redirect_uris":["https://a.example/cb#f"]}]',
    ],
    ['a web client with a custom scheme', '[{"client_id":"x","kind":"web","redirect_uris":["app:/cb"]}]'],
    ['a short service secret', '[{"client_id":"x","kind":"service","client_secret":"short","scopes":[]}]'],
    [
      'an unknown role',
      `[{"client_id":"x","kind":"service","client_secret":"${'s'.repeat(32)}","scopes":[],"roles":["root"]}]`,
    ],
  ])('fails fast naming IDP_CLIENTS for %s', (_case, value) => {
    expect(() => clientsOf({ IDP_CLIENTS: value })).toThrow('configuration: IDP_CLIENTS');
  });
});
