// A real Keycloak on loopback (the distribution scripts/keycloak.sh pins), started with realms imported from JSON.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Role } from '../../src/domain/roles';
import { eventually } from './outcomes';
import { findFreePort } from './ports';

const projectRoot = path.resolve(__dirname, '../..');
/** Development mode starts slowly (a JVM, then a fresh database and the realm imports); a busy machine gets room. */
const startTimeoutMs = 180_000;
const stopTimeoutMs = 20_000;
const requestTimeoutMs = 10_000;

export interface KeycloakUser {
  username: string;
  /** Realm roles; ours are `customer`, `agent` and `admin`. */
  realmRoles: readonly Role[];
  email: string;
  firstName: string;
  lastName: string;
}

export interface KeycloakClient {
  clientId: string;
  /** What the audience mapper puts in `aud`. */
  audience: string;
  /** Access-token lifetime of this client's tokens; the realm's when absent. */
  accessTokenLifespanSeconds?: number;
}

export interface KeycloakRealm {
  name: string;
  /** Realm roles that exist, whether or not a user holds them. */
  roles: readonly string[];
  /** Client scopes every client may request (optional scopes), named like the scopes the contracts require. */
  scopes: readonly string[];
  clients: readonly KeycloakClient[];
  users: readonly KeycloakUser[];
  /** PKCS#8 PEM of the realm's RSA signing key; realms given the same key sign with the same `kid`. */
  signingKeyPem: string;
}

/**
 * The realm as Keycloak's import reads it. Clients are public with direct access grants (the password grant
 * gets a test its tokens) and carry their own protocol mappers: `sub`, `aud`, the realm roles under
 * `realm_access.roles` and the email, which are what the API reads; the built-in client scopes are not imported.
 */
export function realmRepresentation(realm: KeycloakRealm, password: string): Record<string, unknown> {
  const accessTokenClaim = { 'access.token.claim': 'true', 'id.token.claim': 'false' };
  return {
    realm: realm.name,
    enabled: true,
    sslRequired: 'none',
    accessTokenLifespan: 300,
    roles: { realm: realm.roles.map((name) => ({ name })) },
    clientScopes: realm.scopes.map((name) => ({
      name,
      protocol: 'openid-connect',
      attributes: { 'include.in.token.scope': 'true', 'display.on.consent.screen': 'false' },
    })),
    components: {
      'org.keycloak.keys.KeyProvider': [
        {
          name: 'shared-rsa',
          providerId: 'rsa',
          config: {
            privateKey: [realm.signingKeyPem],
            algorithm: ['RS256'],
            priority: ['100'],
            active: ['true'],
            enabled: ['true'],
          },
        },
      ],
    },
    clients: realm.clients.map((client) => ({
      clientId: client.clientId,
      protocol: 'openid-connect',
      enabled: true,
      publicClient: true,
      standardFlowEnabled: false,
      directAccessGrantsEnabled: true,
      fullScopeAllowed: true,
      defaultClientScopes: [],
      optionalClientScopes: [...realm.scopes],
      attributes:
        client.accessTokenLifespanSeconds === undefined
          ? {}
          : { 'access.token.lifespan': String(client.accessTokenLifespanSeconds) },
      protocolMappers: [
        {
          name: 'subject',
          protocol: 'openid-connect',
          protocolMapper: 'oidc-sub-mapper',
          config: { ...accessTokenClaim },
        },
        {
          name: 'audience',
          protocol: 'openid-connect',
          protocolMapper: 'oidc-audience-mapper',
          config: { 'included.custom.audience': client.audience, ...accessTokenClaim },
        },
        {
          name: 'realm roles',
          protocol: 'openid-connect',
          protocolMapper: 'oidc-usermodel-realm-role-mapper',
          config: { 'claim.name': 'realm_access.roles', multivalued: 'true', ...accessTokenClaim },
        },
        {
          name: 'email',
          protocol: 'openid-connect',
          protocolMapper: 'oidc-usermodel-property-mapper',
          config: {
            'user.attribute': 'email',
            'claim.name': 'email',
            'jsonType.label': 'String',
            ...accessTokenClaim,
          },
        },
      ],
    })),
    users: realm.users.map((user) => ({
      username: user.username,
      enabled: true,
      email: user.email,
      emailVerified: true,
      firstName: user.firstName,
      lastName: user.lastName,
      realmRoles: [...user.realmRoles],
      credentials: [{ type: 'password', value: password, temporary: false }],
    })),
  };
}

export interface PasswordGrant {
  realm: string;
  clientId: string;
  username: string;
  /** Client scopes to ask for; Keycloak lists the granted ones in the token's `scope`. */
  scopes: readonly string[];
}

export interface RunningKeycloak {
  readonly baseUrl: string;
  issuerOf(realm: string): string;
  /** An access token from the realm's token endpoint (resource owner password grant). */
  accessToken(grant: PasswordGrant): Promise<string>;
  /** The `kid`s of the realm's published signing keys. */
  signingKeyIds(realm: string): Promise<string[]>;
  /** SIGTERM, then SIGKILL if it lingers; waits for the process to end. */
  stop(): Promise<void>;
}

interface KeycloakInstallation {
  home: string;
  javaHome: string;
}

/** Installs Keycloak on first use (scripts/keycloak.sh, cached in .tools/); fails with the script's message. */
function installKeycloak(): KeycloakInstallation {
  let output: string;
  try {
    output = execFileSync('bash', [path.join(projectRoot, 'scripts/keycloak.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (error) {
    throw new Error('scripts/keycloak.sh could not install Keycloak (its message is above)', {
      cause: error,
    });
  }
  const [home, javaHome] = output.trim().split('\n');
  if (!home || !javaHome) throw new Error(`scripts/keycloak.sh printed no install folder: ${output}`);
  return { home, javaHome };
}

async function getJson(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(requestTimeoutMs) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text itself says what went wrong.
  }
  return { status: response.status, body };
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function lastLines(file: string, count: number): string {
  if (!fs.existsSync(file)) return '(no log)';
  return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count).join('\n');
}

/**
 * Starts Keycloak in development mode (in-memory H2) on a free loopback port, importing `realms`, and resolves
 * once every realm's discovery document answers. Its log goes to `.data/keycloak.log`.
 */
export async function startKeycloak(realms: readonly KeycloakRealm[]): Promise<RunningKeycloak> {
  const { home, javaHome } = installKeycloak();
  const password = randomBytes(18).toString('base64url');
  // Keycloak imports every file of this folder at start; it holds nothing but this run's realms.
  const importDirectory = path.join(home, 'data/import');
  fs.rmSync(importDirectory, { recursive: true, force: true });
  fs.mkdirSync(importDirectory, { recursive: true });
  for (const realm of realms) {
    fs.writeFileSync(
      path.join(importDirectory, `${realm.name}-realm.json`),
      JSON.stringify(realmRepresentation(realm, password)),
    );
  }
  const port = await findFreePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const logFile = path.join(projectRoot, '.data/keycloak.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const log = fs.openSync(logFile, 'w');
  const child = spawn(
    path.join(home, 'bin/kc.sh'),
    [
      'start-dev',
      '--db=dev-mem',
      '--import-realm',
      '--http-host=127.0.0.1',
      `--http-port=${port}`,
      '--health-enabled=false',
      '--metrics-enabled=false',
    ],
    {
      cwd: home,
      env: { ...process.env, JAVA_HOME: javaHome },
      stdio: ['ignore', log, log],
      // Its own process group: kc.sh's Java process goes with it on stop.
      detached: true,
    },
  );
  fs.closeSync(log);
  const exited = exitOf(child);

  async function stop(): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    process.kill(-child.pid, 'SIGTERM');
    const stopped = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), stopTimeoutMs).unref()),
    ]);
    if (!stopped) {
      process.kill(-child.pid, 'SIGKILL');
      await exited;
    }
  }

  const issuerOf = (realm: string) => `${baseUrl}/realms/${realm}`;
  const startedAt = Date.now();
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const exitedWhileStarting = () =>
    new Error(`Keycloak exited while starting; ${logFile} ends with:\n${lastLines(logFile, 30)}`);
  try {
    for (const realm of realms) {
      await eventually(
        () => {
          if (hasExited()) throw exitedWhileStarting();
          return getJson(`${issuerOf(realm.name)}/.well-known/openid-configuration`).catch(() => undefined);
        },
        (answer) => answer?.status === 200,
        { timeoutMs: Math.max(0, startTimeoutMs - (Date.now() - startedAt)), intervalMs: 500 },
      ).catch(() => {
        if (hasExited()) throw exitedWhileStarting();
        throw new Error(
          `Keycloak did not serve realm ${realm.name} within ${startTimeoutMs / 1000} s; ` +
            `${logFile} ends with:\n${lastLines(logFile, 30)}`,
        );
      });
    }
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    baseUrl,
    issuerOf,
    async accessToken(grant) {
      const answer = await getJson(`${issuerOf(grant.realm)}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'password',
          client_id: grant.clientId,
          username: grant.username,
          password,
          scope: grant.scopes.join(' '),
        }),
      });
      const token = (answer.body as { access_token?: unknown }).access_token;
      if (answer.status !== 200 || typeof token !== 'string') {
        throw new Error(
          `Keycloak refused the password grant of ${grant.username} at ${grant.clientId} in ${grant.realm}: ` +
            `${answer.status} ${JSON.stringify(answer.body)}`,
        );
      }
      return token;
    },
    async signingKeyIds(realm) {
      const answer = await getJson(`${issuerOf(realm)}/protocol/openid-connect/certs`);
      const keys = (answer.body as { keys?: { kid?: string; use?: string }[] }).keys ?? [];
      return keys.filter((key) => key.use === 'sig').flatMap((key) => (key.kid ? [key.kid] : []));
    },
    stop,
  };
}
