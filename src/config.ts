// Typed configuration for every process, read once from the environment at start, failing fast by variable name.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { roles as knownRoleNames, type Role } from './domain/roles';
import { taskQueues as bookingTaskQueues } from './domain/task-queues';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Environment = Record<string, string | undefined>;

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export interface Config {
  environment: 'development' | 'production' | 'test';
  logLevel: LogLevel;
  http: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    requestTimeoutMs: number;
    corsOrigins: string[];
    /** Take the client address from X-Forwarded-For; only behind a proxy that sets it. */
    trustProxy: boolean;
    /** PEM files; when given, REST serves HTTP/2 over TLS with HTTP/1.1 fallback on the same port. */
    tls?: { certificateFile: string; keyFile: string };
  };
  /** Requests per window and client; in-memory counters per API process (see src/api/rest/rate-limits.ts). */
  rateLimit: {
    windowSeconds: number;
    /** 0 turns the per-user limit off. */
    perUser: number;
    /** 0 turns the per-address limit off. */
    perAddress: number;
  };
  idempotency: {
    /** How long an Idempotency-Key and its response are kept; at least 24 hours. */
    retentionHours: number;
    /** After this long a key whose request never finished (a crashed process) may be taken by a retry. */
    inFlightLockSeconds: number;
    purgeIntervalSeconds: number;
  };
  grpc: {
    host: string;
    port: number;
    /** PEM files for mutual TLS; all three or none (then only a GRPC_INSECURE server may start). */
    tls?: { caFile: string; certificateFile: string; keyFile: string };
    /** Client certificate CNs or DNS/URI SANs of the services allowed to call. */
    allowedClients: string[];
    /** Plaintext, no client certificates: an explicit development switch, never a fallback. */
    insecure: boolean;
    maxReceiveMessageBytes: number;
    maxSendMessageBytes: number;
    keepaliveTimeMs: number;
    keepaliveTimeoutMs: number;
    /** How long a stopping server lets calls in flight finish before cutting them off. */
    shutdownGraceMs: number;
    healthCheckIntervalMs: number;
  };
  database: {
    url: string;
    poolSize: number;
  };
  temporal: TemporalConfig;
  worker: {
    /** Task queues this worker process serves; all of them unless narrowed for separate scaling. */
    taskQueues: string[];
    maxConcurrentActivities: number;
    /** Local activity slots: the seat hold of a create runs as one, inside the workflow task. */
    maxConcurrentLocalActivities: number;
    maxConcurrentWorkflowTasks: number;
    /** Open bookings kept in the worker's memory at most (0: none); evicted ones are replayed when they next have work. */
    maxCachedWorkflows: number;
  };
  catalog: {
    /** How long a page of the route catalogue is answered again without PostgreSQL; 0 asks every time. */
    routeCacheSeconds: number;
    /** The longest a seat availability answer is kept while no change to its route is heard; 0 keeps none. */
    availabilityCacheSeconds: number;
    /** Seat availability answers (a route on a date) kept at most per API process. */
    availabilityCacheEntries: number;
  };
  /** Prometheus /metrics listeners, apart from the public ports: loopback unless a deployment opens them. */
  metrics: {
    /** The API process's (METRICS_HOST, METRICS_PORT). */
    api: { host: string; port: number };
    /** The worker process's, with its /healthz and /readyz (WORKER_METRICS_HOST, WORKER_METRICS_PORT). */
    worker: { host: string; port: number };
  };
  booking: {
    holdDurationSeconds: number;
    changeCutoffSeconds: number;
    maxPassengersPerBooking: number;
    maxOpenHoldsPerCustomer: number;
    /**
     * How long a create waits for its seats to be held before answering that the booking is still being made
     * (REST 202, gRPC BOOKING_PROCESSING): below HTTP_REQUEST_TIMEOUT_MS, so no create times out after starting.
     */
    createAnswerTimeoutMs: number;
    /** Seconds past its expiry before a lapsed hold of an unconfirmed booking may be taken by another booking. */
    lapsedHoldGraceSeconds: number;
    /**
     * How often an API process looks for creates whose booking id was given out but whose workflow start never
     * reached Temporal (a failed start after a 202, a crash), and starts them.
     */
    startReconcileIntervalSeconds: number;
  };
  encryption: {
    /** `keyId:base64key` pairs; old keys stay here after rotation so old rows still decrypt. */
    keyring: string;
    activeKeyId: string;
    blindIndexKey: string;
  };
  /** The codec endpoint (`/codec/decode`, `/codec/encode`) operators point the Temporal UI and CLI at. */
  codec: {
    /** Browser origins of the Temporal UI, allowed by CORS on the codec endpoint only. */
    corsOrigins: string[];
    /** Development only: loopback callers without a token may use it, so the embedded stack's UI decodes. */
    allowLoopbackWithoutToken: boolean;
  };
  auth: AuthConfig;
  notifications: NotificationsConfig;
  tracing: TracingConfig;
}

/** The Temporal frontend and how to reach it: TEMPORAL_* variables named as the `temporal` CLI's, but for its _PATH files. */
export interface TemporalConfig {
  address: string;
  namespace: string;
  /** Present when the frontend is reached over TLS: TEMPORAL_TLS, or implied by any TLS setting or an API key. */
  tls?: TemporalTlsConfig;
  /** Temporal Cloud API key (TEMPORAL_API_KEY), sent as `authorization: Bearer <key>`; never logged. */
  apiKey?: string;
}

export interface TemporalTlsConfig {
  /** CA certificates the server's certificate must chain to (TEMPORAL_TLS_CA); absent: the system's roots. */
  serverCaPem?: Buffer;
  /** Mutual TLS, both PEM: the client certificate (chain) and its private key (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY). */
  clientCertificate?: { certificatePem: Buffer; privateKey: Buffer };
  /** Name the server certificate is checked against, sent as SNI; absent: the host of TEMPORAL_ADDRESS. */
  serverName?: string;
}

export const tracesSamplers = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** OpenTelemetry tracing, from the standard OTEL_* variables; off unless an exporter or endpoint is named. */
export interface TracingConfig {
  enabled: boolean;
  /** OTEL_SERVICE_NAME (or `service.name` among the resource attributes); each process has its own default. */
  serviceName?: string;
  /** OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs describing the deployment (environment, version, region). */
  resourceAttributes: Record<string, string>;
  /** The OTLP/HTTP protobuf traces URL, `/v1/traces` included. */
  endpoint: string;
  /** Sent with every export, e.g. a backend's API key. */
  headers: Record<string, string>;
  sampler: (typeof tracesSamplers)[number];
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  samplerRatio: number;
}

/** Signature algorithms a verifier may accept; symmetric ones and `none` are never allowed. */
export const tokenAlgorithms = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
] as const;
export type TokenAlgorithm = (typeof tokenAlgorithms)[number];

export interface AuthConfig {
  /** The only issuer whose tokens are accepted: OIDC_ISSUER, or the embedded identity provider's own. */
  issuer: string;
  /** Where the signing keys are; absent means discovered from `<issuer>/.well-known/openid-configuration`. */
  jwksUrl?: string;
  audience: string;
  /** Claim compared with `audience`: `aud` normally, `client_id` for Cognito access tokens. */
  audienceClaim: string;
  algorithms: TokenAlgorithm[];
  clockToleranceSeconds: number;
  /** Claim name or dot path holding the roles; Keycloak's `realm_access.roles` is always tried as well. */
  rolesClaim: string;
  /** Claims (names or dot paths) whose scopes are granted together: `scope` and `scp` unless configured. */
  scopesClaims: string[];
  /** Role of a caller whose token names none of ours (external providers often send no roles); null: none. */
  defaultRole: 'customer' | null;
  /** The embedded identity provider, on unless OIDC_ISSUER names an external issuer. */
  embedded: EmbeddedIdentityProviderConfig | null;
}

export interface EmbeddedIdentityProviderConfig {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Age at which the signing key is replaced; older public keys stay published until their tokens expire. */
  signingKeyRotationSeconds: number;
  loginMaxFailuresPerAccount: number;
  loginMaxFailuresPerAddress: number;
  loginThrottleWindowSeconds: number;
  /** Registers Swagger UI at /docs as a public authorization-code client (IDP_DOCS_CLIENT). */
  docsClient: boolean;
  /** The other OAuth clients of the authorization server (IDP_CLIENTS). */
  clients: OAuthClientRegistration[];
}

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

export const notificationTransports = ['outbox', 'smtp+http'] as const;

export interface NotificationsConfig {
  /** `outbox`: files a developer reads (embedded stack); `smtp+http`: an SMTP server and an HTTP SMS provider. */
  transport: (typeof notificationTransports)[number];
  /** Where the outbox transport writes; a relative path is taken from the project root. */
  outboxDirectory: string;
  emailFrom: string;
  smtp: { host: string; port: number; secure: boolean; user: string; password: string; timeoutMs: number };
  /** providerUrl and apiKey are required with the smtp+http transport. */
  sms: { providerUrl?: string; apiKey: string; timeoutMs: number };
}

function text(environment: Environment, variable: string, fallback?: string): string {
  const value = environment[variable]?.trim();
  if (value) return value;
  if (fallback !== undefined) return fallback;
  throw new ConfigError(variable, 'is required but not set');
}

function integer(
  environment: Environment,
  variable: string,
  fallback: number,
  bounds: { min: number; max: number },
): number {
  const raw = environment[variable]?.trim();
  if (!raw) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(variable, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < bounds.min || value > bounds.max) {
    throw new ConfigError(variable, `must be between ${bounds.min} and ${bounds.max}, got ${value}`);
  }
  return value;
}

/**
 * A cached booking costs the worker about 0.9 MiB of memory (the bench's soak: 231 MiB idle, about 1,160 MiB and
 * flat with 1,000 cached while 10,000 are open); by default the cache holds a quarter of the V8 heap limit in MiB as
 * bookings (100 to 1,000), and never fewer than the workflow tasks that may run at once.
 */
export function defaultMaxCachedWorkflows(heapLimitMiB: number, maxConcurrentWorkflowTasks: number): number {
  const byMemory = Math.min(1000, Math.max(100, Math.floor(heapLimitMiB / 4)));
  return Math.max(byMemory, maxConcurrentWorkflowTasks);
}

function workerConfig(environment: Environment, taskQueues: string[]): Config['worker'] {
  const maxConcurrentWorkflowTasks = integer(environment, 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', 40, {
    min: 1,
    max: 1000,
  });
  const maxCachedWorkflows = integer(
    environment,
    'WORKER_MAX_CACHED_WORKFLOWS',
    defaultMaxCachedWorkflows(getHeapStatistics().heap_size_limit / 2 ** 20, maxConcurrentWorkflowTasks),
    { min: 0, max: 100_000 },
  );
  // The SDK would quietly change either number to fit the other; say so instead.
  if (maxCachedWorkflows !== 0 && maxConcurrentWorkflowTasks < 2) {
    throw new ConfigError(
      'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
      'must be at least 2 while workflows are cached (WORKER_MAX_CACHED_WORKFLOWS is not 0)',
    );
  }
  if (maxCachedWorkflows !== 0 && maxCachedWorkflows < maxConcurrentWorkflowTasks) {
    throw new ConfigError(
      'WORKER_MAX_CACHED_WORKFLOWS',
      `must be 0 or at least WORKER_MAX_CONCURRENT_WORKFLOW_TASKS (${maxConcurrentWorkflowTasks}), got ${maxCachedWorkflows}`,
    );
  }
  return {
    taskQueues,
    maxConcurrentActivities: integer(environment, 'WORKER_MAX_CONCURRENT_ACTIVITIES', 50, {
      min: 1,
      max: 1000,
    }),
    maxConcurrentLocalActivities: integer(environment, 'WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES', 50, {
      min: 1,
      max: 1000,
    }),
    maxConcurrentWorkflowTasks,
    maxCachedWorkflows,
  };
}

function port(environment: Environment, variable: string, fallback: number): number {
  return integer(environment, variable, fallback, { min: 0, max: 65535 });
}

function oneOf<T extends string>(
  environment: Environment,
  variable: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = text(environment, variable, fallback) as T;
  if (!allowed.includes(value)) throw new ConfigError(variable, `must be one of ${allowed.join(', ')}`);
  return value;
}

function list(environment: Environment, variable: string, fallback: string[]): string[] {
  const raw = environment[variable]?.trim();
  if (!raw) return fallback;
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function databaseUrl(environment: Environment): string {
  const url = text(environment, 'DATABASE_URL');
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError('DATABASE_URL', 'must be a postgres:// URL');
  return url;
}

function httpUrl(environment: Environment, variable: string, fallback?: string): string | undefined {
  const raw = environment[variable]?.trim() || fallback;
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(variable, `must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(variable, `must be an http(s) URL, got "${raw}"`);
  }
  // The issuer is compared as an exact string with the `iss` claim (Auth0's ends in a slash): keep it as written.
  return raw;
}

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
function oauthClients(environment: Environment): OAuthClientRegistration[] {
  const variable = 'IDP_CLIENTS';
  const raw = environment[variable]?.trim();
  if (!raw) return [];
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

function authConfig(environment: Environment, httpPort: number): AuthConfig {
  const externalIssuer = httpUrl(environment, 'OIDC_ISSUER');
  const jwksUrl = httpUrl(environment, 'OIDC_JWKS_URL');
  if (jwksUrl !== undefined && externalIssuer === undefined) {
    throw new ConfigError(
      'OIDC_JWKS_URL',
      'needs OIDC_ISSUER: the embedded identity provider publishes its own keys',
    );
  }
  const algorithms = list(environment, 'OIDC_ALGORITHMS', ['RS256']);
  const unknownAlgorithm = algorithms.find(
    (algorithm) => !(tokenAlgorithms as readonly string[]).includes(algorithm),
  );
  if (unknownAlgorithm !== undefined || algorithms.length === 0) {
    throw new ConfigError('OIDC_ALGORITHMS', `must list some of ${tokenAlgorithms.join(', ')}`);
  }
  if (externalIssuer === undefined && !algorithms.includes('RS256')) {
    throw new ConfigError(
      'OIDC_ALGORITHMS',
      'must include RS256, which the embedded identity provider signs with',
    );
  }
  const defaultRole = oneOf(environment, 'OIDC_DEFAULT_ROLE', ['customer', 'none'], 'customer');
  const scopesClaims = list(environment, 'OIDC_SCOPES_CLAIM', ['scope', 'scp']);
  if (externalIssuer === undefined && environment.OIDC_SCOPES_CLAIM?.trim()) {
    throw new ConfigError(
      'OIDC_SCOPES_CLAIM',
      'needs OIDC_ISSUER: the embedded identity provider writes its scopes in scope',
    );
  }
  if (scopesClaims.length === 0) {
    throw new ConfigError('OIDC_SCOPES_CLAIM', 'must name at least one claim, e.g. scope,scp');
  }
  const embeddedIssuer = httpUrl(environment, 'IDP_ISSUER', `http://localhost:${httpPort}`)!;
  return {
    issuer: externalIssuer ?? embeddedIssuer,
    ...(jwksUrl !== undefined ? { jwksUrl } : {}),
    audience: text(environment, 'OIDC_AUDIENCE', 'bus-booking-api'),
    audienceClaim: text(environment, 'OIDC_AUDIENCE_CLAIM', 'aud'),
    algorithms: algorithms as TokenAlgorithm[],
    clockToleranceSeconds: integer(environment, 'OIDC_CLOCK_TOLERANCE_SECONDS', 30, { min: 0, max: 300 }),
    rolesClaim: text(environment, 'OIDC_ROLES_CLAIM', 'roles'),
    scopesClaims,
    defaultRole: defaultRole === 'none' ? null : defaultRole,
    embedded:
      externalIssuer !== undefined
        ? null
        : {
            accessTokenTtlSeconds: integer(environment, 'IDP_ACCESS_TOKEN_TTL_SECONDS', 900, {
              min: 1,
              max: 24 * 3600,
            }),
            refreshTokenTtlSeconds: integer(environment, 'IDP_REFRESH_TOKEN_TTL_SECONDS', 14 * 86400, {
              min: 60,
              max: 365 * 86400,
            }),
            signingKeyRotationSeconds: integer(environment, 'IDP_SIGNING_KEY_ROTATION_SECONDS', 30 * 86400, {
              min: 3600,
              max: 365 * 86400,
            }),
            loginMaxFailuresPerAccount: integer(environment, 'IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, {
              min: 1,
              max: 1000,
            }),
            loginMaxFailuresPerAddress: integer(environment, 'IDP_LOGIN_MAX_FAILURES_PER_IP', 20, {
              min: 1,
              max: 100_000,
            }),
            loginThrottleWindowSeconds: integer(environment, 'IDP_LOGIN_THROTTLE_WINDOW_SECONDS', 900, {
              min: 1,
              max: 86400,
            }),
            docsClient: flag(environment, 'IDP_DOCS_CLIENT', true),
            clients: oauthClients(environment),
          },
  };
}

function flag(environment: Environment, variable: string, fallback: boolean): boolean {
  const raw = environment[variable]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(variable, `must be true or false, got "${raw}"`);
}

function httpTlsConfig(environment: Environment): Config['http']['tls'] {
  const certificateFile = environment.HTTP_TLS_CERT?.trim();
  const keyFile = environment.HTTP_TLS_KEY?.trim();
  if (!certificateFile && !keyFile) return undefined;
  if (!certificateFile) throw new ConfigError('HTTP_TLS_CERT', 'is required when HTTP_TLS_KEY is set');
  if (!keyFile) throw new ConfigError('HTTP_TLS_KEY', 'is required when HTTP_TLS_CERT is set');
  return { certificateFile, keyFile };
}

function grpcConfig(environment: Environment): Config['grpc'] {
  const tlsFiles = {
    caFile: environment.GRPC_TLS_CA?.trim(),
    certificateFile: environment.GRPC_TLS_CERT?.trim(),
    keyFile: environment.GRPC_TLS_KEY?.trim(),
  };
  const variables = {
    caFile: 'GRPC_TLS_CA',
    certificateFile: 'GRPC_TLS_CERT',
    keyFile: 'GRPC_TLS_KEY',
  } as const;
  const given = Object.values(tlsFiles).filter(Boolean).length;
  if (given > 0 && given < 3) {
    const missing = (Object.keys(variables) as (keyof typeof variables)[]).find((key) => !tlsFiles[key])!;
    throw new ConfigError(
      variables[missing],
      'is required when any of GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY is set',
    );
  }
  return {
    host: text(environment, 'GRPC_HOST', '0.0.0.0'),
    port: port(environment, 'GRPC_PORT', 50051),
    ...(given === 3
      ? {
          tls: {
            caFile: tlsFiles.caFile!,
            certificateFile: tlsFiles.certificateFile!,
            keyFile: tlsFiles.keyFile!,
          },
        }
      : {}),
    allowedClients: list(environment, 'GRPC_ALLOWED_CLIENTS', []),
    insecure: flag(environment, 'GRPC_INSECURE', false),
    maxReceiveMessageBytes: integer(environment, 'GRPC_MAX_RECEIVE_MESSAGE_BYTES', 64 * 1024, {
      min: 1024,
      max: 64 * 1024 * 1024,
    }),
    maxSendMessageBytes: integer(environment, 'GRPC_MAX_SEND_MESSAGE_BYTES', 4 * 1024 * 1024, {
      min: 1024,
      max: 64 * 1024 * 1024,
    }),
    keepaliveTimeMs: integer(environment, 'GRPC_KEEPALIVE_TIME_MS', 60_000, {
      min: 1000,
      max: 2 * 3600 * 1000,
    }),
    keepaliveTimeoutMs: integer(environment, 'GRPC_KEEPALIVE_TIMEOUT_MS', 20_000, {
      min: 1000,
      max: 600_000,
    }),
    shutdownGraceMs: integer(environment, 'GRPC_SHUTDOWN_GRACE_MS', 10_000, { min: 0, max: 600_000 }),
    healthCheckIntervalMs: integer(environment, 'GRPC_HEALTH_CHECK_INTERVAL_MS', 5000, {
      min: 100,
      max: 600_000,
    }),
  };
}

function readSettingFile(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(variable, `names a file that cannot be read (${code}): ${file}`);
  }
}

/** Every certificate of a PEM file (a CA bundle, or a client certificate followed by its intermediates). */
function pemCertificates(
  environment: Environment,
  variable: string,
): { pem: Buffer; leaf: X509Certificate } | undefined {
  const file = environment[variable]?.trim();
  if (!file) return undefined;
  const pem = readSettingFile(variable, file);
  const blocks =
    pem.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new ConfigError(variable, `is not a PEM certificate file: ${file}`);
  const certificates = blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new ConfigError(variable, `holds a PEM certificate that cannot be parsed: ${file}`);
    }
  });
  return { pem, leaf: certificates[0] };
}

function pemPrivateKey(
  environment: Environment,
  variable: string,
): { pem: Buffer; key: KeyObject } | undefined {
  const file = environment[variable]?.trim();
  if (!file) return undefined;
  const pem = readSettingFile(variable, file);
  try {
    return { pem, key: createPrivateKey({ key: pem, format: 'pem' }) };
  } catch {
    // The parser's own message is left out: it may quote the file.
    throw new ConfigError(variable, `is not an unencrypted PEM private key: ${file}`);
  }
}

const temporalSecurityVariables = [
  'TEMPORAL_TLS_CA',
  'TEMPORAL_TLS_CERT',
  'TEMPORAL_TLS_KEY',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_API_KEY',
] as const;

/**
 * Every Temporal connection security variable set to nothing: for the processes an embedded stack points at its own
 * plaintext dev server, whatever TLS settings or API key the developer's shell holds for another cluster.
 */
export const plaintextTemporalEnvironment: Readonly<Record<string, string>> = Object.fromEntries(
  ['TEMPORAL_TLS', ...temporalSecurityVariables].map((variable) => [variable, '']),
);

/**
 * TLS is on when TEMPORAL_TLS says so or, as with the `temporal` CLI, when any TLS setting or an API key is given;
 * TEMPORAL_TLS=false beside one of them is a contradiction, never a quiet plaintext connection.
 */
function temporalConfig(environment: Environment): TemporalConfig {
  const address = text(environment, 'TEMPORAL_ADDRESS', '127.0.0.1:7233');
  const namespace = text(environment, 'TEMPORAL_NAMESPACE', 'default');
  const tlsSwitch = environment.TEMPORAL_TLS?.trim() ? flag(environment, 'TEMPORAL_TLS', false) : undefined;
  const given = temporalSecurityVariables.filter((variable) => environment[variable]?.trim());
  if (tlsSwitch === false && given.length > 0) {
    const variable = given.includes('TEMPORAL_API_KEY') ? 'TEMPORAL_API_KEY' : given[0];
    throw new ConfigError(
      variable,
      variable === 'TEMPORAL_API_KEY'
        ? 'is sent only over TLS, but TEMPORAL_TLS is false'
        : 'needs TLS, but TEMPORAL_TLS is false (leave TEMPORAL_TLS unset or true)',
    );
  }
  if (!(tlsSwitch ?? given.length > 0)) return { address, namespace };

  const serverCa = pemCertificates(environment, 'TEMPORAL_TLS_CA');
  const certificate = pemCertificates(environment, 'TEMPORAL_TLS_CERT');
  const privateKey = pemPrivateKey(environment, 'TEMPORAL_TLS_KEY');
  if (certificate !== undefined && privateKey === undefined) {
    throw new ConfigError('TEMPORAL_TLS_KEY', 'is required when TEMPORAL_TLS_CERT is set (mutual TLS)');
  }
  if (privateKey !== undefined && certificate === undefined) {
    throw new ConfigError('TEMPORAL_TLS_CERT', 'is required when TEMPORAL_TLS_KEY is set (mutual TLS)');
  }
  if (
    certificate !== undefined &&
    privateKey !== undefined &&
    !certificate.leaf.checkPrivateKey(privateKey.key)
  ) {
    throw new ConfigError(
      'TEMPORAL_TLS_KEY',
      'is not the private key of the certificate in TEMPORAL_TLS_CERT',
    );
  }
  const serverName = environment.TEMPORAL_TLS_SERVER_NAME?.trim();
  if (serverName && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(serverName)) {
    throw new ConfigError('TEMPORAL_TLS_SERVER_NAME', `must be a host name, got "${serverName}"`);
  }
  const apiKey = environment.TEMPORAL_API_KEY?.trim();
  // Checked without quoting it: the key must never reach a log line.
  if (apiKey && !/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new ConfigError('TEMPORAL_API_KEY', 'must be printable ASCII without spaces');
  }
  return {
    address,
    namespace,
    tls: {
      ...(serverCa !== undefined ? { serverCaPem: serverCa.pem } : {}),
      ...(certificate !== undefined && privateKey !== undefined
        ? { clientCertificate: { certificatePem: certificate.pem, privateKey: privateKey.pem } }
        : {}),
      ...(serverName ? { serverName } : {}),
    },
    ...(apiKey ? { apiKey } : {}),
  };
}

function notificationsConfig(environment: Environment): NotificationsConfig {
  const transport = oneOf(environment, 'NOTIFICATIONS_TRANSPORT', notificationTransports, 'outbox');
  const external = transport === 'smtp+http';
  const providerUrl = httpUrl(environment, 'SMS_PROVIDER_URL');
  if (external && providerUrl === undefined) {
    throw new ConfigError('SMS_PROVIDER_URL', 'is required when NOTIFICATIONS_TRANSPORT is smtp+http');
  }
  return {
    transport,
    // Beside the embedded stack's other data, wherever STACK_DATA_DIR puts it (the stack's processes inherit it).
    outboxDirectory: text(
      environment,
      'NOTIFICATIONS_OUTBOX_DIR',
      `${text(environment, 'STACK_DATA_DIR', '.data').replace(/\/+$/, '')}/outbox`,
    ),
    emailFrom: text(environment, 'NOTIFICATIONS_EMAIL_FROM', 'Bus Bookings <no-reply@bookings.example>'),
    smtp: {
      host: text(environment, 'SMTP_HOST', 'localhost'),
      port: port(environment, 'SMTP_PORT', 587),
      secure: flag(environment, 'SMTP_SECURE', false),
      user: text(environment, 'SMTP_USER', ''),
      password: text(environment, 'SMTP_PASSWORD', ''),
      timeoutMs: integer(environment, 'SMTP_TIMEOUT_MS', 10_000, { min: 100, max: 300_000 }),
    },
    sms: {
      ...(providerUrl !== undefined ? { providerUrl } : {}),
      apiKey: text(environment, 'SMS_PROVIDER_API_KEY', external ? undefined : ''),
      timeoutMs: integer(environment, 'SMS_PROVIDER_TIMEOUT_MS', 10_000, { min: 100, max: 300_000 }),
    },
  };
}

/** OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_*HEADERS: comma-separated `key=value`, values percent-encoded. */
function keyValuePairs(environment: Environment, variable: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of list(environment, variable, [])) {
    const separator = item.indexOf('=');
    const key = item.slice(0, separator).trim();
    if (separator <= 0 || key === '') {
      throw new ConfigError(variable, 'must be comma-separated key=value pairs');
    }
    try {
      pairs[key] = decodeURIComponent(item.slice(separator + 1).trim());
    } catch {
      throw new ConfigError(variable, `has a badly percent-encoded value for "${key}"`);
    }
  }
  return pairs;
}

function fraction(environment: Environment, variable: string, fallback: number): number {
  const raw = environment[variable]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || value > 1) {
    throw new ConfigError(variable, `must be a number from 0 to 1, got "${raw}"`);
  }
  return value;
}

/**
 * The OpenTelemetry specification's variables, read here so this module stays the one reader of the environment.
 * Unlike the specification's default exporter (`otlp`), tracing stays off until OTEL_TRACES_EXPORTER=otlp or an
 * OTLP endpoint is set: no process sends spans to a collector nobody configured.
 */
export function loadTracingConfig(environment: Environment = process.env): TracingConfig {
  const disabled = flag(environment, 'OTEL_SDK_DISABLED', false);
  const exporter = environment.OTEL_TRACES_EXPORTER?.trim() ?? '';
  if (!['otlp', 'none', ''].includes(exporter)) {
    throw new ConfigError('OTEL_TRACES_EXPORTER', `must be otlp or none, got "${exporter}"`);
  }
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = environment[variable]?.trim();
    if (protocol && protocol !== 'http/protobuf') {
      throw new ConfigError(
        variable,
        `must be http/protobuf (the exporter this service ships), got "${protocol}"`,
      );
    }
  }
  const tracesEndpoint = httpUrl(environment, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = httpUrl(environment, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const endpoint =
    tracesEndpoint ??
    (baseEndpoint === undefined
      ? 'http://localhost:4318/v1/traces'
      : `${baseEndpoint.replace(/\/+$/, '')}/v1/traces`);
  const sampler = oneOf(environment, 'OTEL_TRACES_SAMPLER', tracesSamplers, 'parentbased_always_on');
  const attributes = keyValuePairs(environment, 'OTEL_RESOURCE_ATTRIBUTES');
  const serviceName = environment.OTEL_SERVICE_NAME?.trim() || attributes['service.name'];
  return {
    enabled:
      !disabled &&
      (exporter === 'otlp' || (exporter === '' && (tracesEndpoint ?? baseEndpoint) !== undefined)),
    ...(serviceName === undefined ? {} : { serviceName }),
    resourceAttributes: attributes,
    endpoint,
    headers: {
      ...keyValuePairs(environment, 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...keyValuePairs(environment, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    },
    sampler,
    samplerRatio: fraction(environment, 'OTEL_TRACES_SAMPLER_ARG', 1),
  };
}

/** The Temporal dev server's Web UI, under both names a developer may type. */
export const defaultTemporalUiOrigins = ['http://localhost:8233', 'http://127.0.0.1:8233'] as const;

/**
 * A create must answer before the REST request timeout turns it into a 503 for a booking that goes on to exist;
 * by default it keeps a fifth of the timeout for the work before and after the wait.
 */
function createAnswerTimeoutMs(environment: Environment, requestTimeoutMs: number): number {
  const variable = 'BOOKING_CREATE_ANSWER_TIMEOUT_MS';
  const value = integer(environment, variable, Math.floor(requestTimeoutMs * 0.8), {
    min: 1,
    max: 300_000,
  });
  if (value >= requestTimeoutMs) {
    throw new ConfigError(
      variable,
      `must be below HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${value}`,
    );
  }
  return value;
}

const allTaskQueues: string[] = Object.values(bookingTaskQueues);

/** Reads the whole configuration; call once in each process's entry point and pass the result down. */
export function loadConfig(environment: Environment = process.env): Config {
  const taskQueues = list(environment, 'WORKER_TASK_QUEUES', allTaskQueues);
  const unknownQueue = taskQueues.find((queue) => !allTaskQueues.includes(queue));
  if (unknownQueue) {
    throw new ConfigError('WORKER_TASK_QUEUES', `names unknown queue "${unknownQueue}"`);
  }
  const httpPort = port(environment, 'HTTP_PORT', 8080);
  const httpTls = httpTlsConfig(environment);
  const requestTimeoutMs = integer(environment, 'HTTP_REQUEST_TIMEOUT_MS', 10_000, {
    min: 100,
    max: 300_000,
  });
  const runtimeEnvironment = oneOf(
    environment,
    'NODE_ENV',
    ['development', 'production', 'test'],
    'development',
  );
  return {
    environment: runtimeEnvironment,
    logLevel: oneOf(environment, 'LOG_LEVEL', logLevels, 'info'),
    http: {
      host: text(environment, 'HTTP_HOST', '0.0.0.0'),
      port: httpPort,
      bodyLimitBytes: integer(environment, 'HTTP_BODY_LIMIT_BYTES', 64 * 1024, {
        min: 1024,
        max: 10 * 1024 * 1024,
      }),
      requestTimeoutMs,
      corsOrigins: list(environment, 'CORS_ORIGINS', []),
      trustProxy: flag(environment, 'HTTP_TRUST_PROXY', false),
      ...(httpTls !== undefined ? { tls: httpTls } : {}),
    },
    rateLimit: {
      windowSeconds: integer(environment, 'RATE_LIMIT_WINDOW_SECONDS', 60, { min: 1, max: 3600 }),
      perUser: integer(environment, 'RATE_LIMIT_PER_USER', 300, { min: 0, max: 1_000_000 }),
      perAddress: integer(environment, 'RATE_LIMIT_PER_IP', 1200, { min: 0, max: 1_000_000 }),
    },
    idempotency: {
      retentionHours: integer(environment, 'IDEMPOTENCY_KEY_RETENTION_HOURS', 24, { min: 24, max: 24 * 365 }),
      inFlightLockSeconds: integer(environment, 'IDEMPOTENCY_KEY_LOCK_SECONDS', 120, { min: 1, max: 3600 }),
      purgeIntervalSeconds: integer(environment, 'IDEMPOTENCY_KEY_PURGE_INTERVAL_SECONDS', 600, {
        min: 10,
        max: 86400,
      }),
    },
    grpc: grpcConfig(environment),
    database: {
      url: databaseUrl(environment),
      poolSize: integer(environment, 'DATABASE_POOL_SIZE', 10, { min: 1, max: 200 }),
    },
    temporal: temporalConfig(environment),
    worker: workerConfig(environment, taskQueues),
    catalog: {
      routeCacheSeconds: integer(environment, 'CATALOG_ROUTE_CACHE_SECONDS', 30, { min: 0, max: 3600 }),
      availabilityCacheSeconds: integer(environment, 'CATALOG_AVAILABILITY_CACHE_SECONDS', 60, {
        min: 0,
        max: 3600,
      }),
      availabilityCacheEntries: integer(environment, 'CATALOG_AVAILABILITY_CACHE_ENTRIES', 10_000, {
        min: 1,
        max: 1_000_000,
      }),
    },
    metrics: {
      api: {
        host: text(environment, 'METRICS_HOST', '127.0.0.1'),
        port: port(environment, 'METRICS_PORT', 9464),
      },
      worker: {
        host: text(environment, 'WORKER_METRICS_HOST', '127.0.0.1'),
        port: port(environment, 'WORKER_METRICS_PORT', 9465),
      },
    },
    booking: {
      holdDurationSeconds: integer(environment, 'BOOKING_HOLD_SECONDS', 15 * 60, { min: 1, max: 24 * 3600 }),
      changeCutoffSeconds: integer(environment, 'BOOKING_CHANGE_CUTOFF_SECONDS', 3600, {
        min: 0,
        max: 7 * 86400,
      }),
      maxPassengersPerBooking: integer(environment, 'BOOKING_MAX_PASSENGERS', 9, { min: 1, max: 50 }),
      maxOpenHoldsPerCustomer: integer(environment, 'BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER', 5, {
        min: 1,
        max: 1000,
      }),
      createAnswerTimeoutMs: createAnswerTimeoutMs(environment, requestTimeoutMs),
      lapsedHoldGraceSeconds: integer(environment, 'BOOKING_LAPSED_HOLD_GRACE_SECONDS', 60, {
        min: 0,
        max: 86400,
      }),
      startReconcileIntervalSeconds: integer(environment, 'BOOKING_START_RECONCILE_SECONDS', 5, {
        min: 1,
        max: 3600,
      }),
    },
    encryption: {
      keyring: text(environment, 'ENCRYPTION_KEYS'),
      activeKeyId: text(environment, 'ENCRYPTION_ACTIVE_KEY_ID'),
      blindIndexKey: text(environment, 'BLIND_INDEX_KEY'),
    },
    codec: {
      corsOrigins: list(environment, 'CODEC_CORS_ORIGINS', [...defaultTemporalUiOrigins]),
      allowLoopbackWithoutToken: runtimeEnvironment === 'development',
    },
    auth: authConfig(environment, httpPort),
    notifications: notificationsConfig(environment),
    tracing: loadTracingConfig(environment),
  };
}

export interface StackConfig {
  dataDirectory: string;
  postgresPort: number;
  temporalPort: number;
  temporalUiPort: number;
  httpPort: number;
  grpcPort: number;
  metricsPort: number;
  workerMetricsPort: number;
  namespace: string;
}

/** STACK_DATA_DIR, relative to the project unless absolute. */
function stackDataDirectory(environment: Environment, projectRoot: string): string {
  const dataDirectory = text(environment, 'STACK_DATA_DIR', '.data');
  return dataDirectory.startsWith('/') ? dataDirectory : `${projectRoot}/${dataDirectory}`;
}

/** Settings of the one-command embedded stack (`npm start`); the processes it runs read `loadConfig`. */
export function loadStackConfig(environment: Environment = process.env, projectRoot: string): StackConfig {
  return {
    dataDirectory: stackDataDirectory(environment, projectRoot),
    postgresPort: port(environment, 'EMBEDDED_POSTGRES_PORT', 54320),
    temporalPort: port(environment, 'TEMPORAL_PORT', 7233),
    temporalUiPort: port(environment, 'TEMPORAL_UI_PORT', 8233),
    httpPort: port(environment, 'HTTP_PORT', 8080),
    grpcPort: port(environment, 'GRPC_PORT', 50051),
    metricsPort: port(environment, 'METRICS_PORT', 9464),
    workerMetricsPort: port(environment, 'WORKER_METRICS_PORT', 9465),
    namespace: text(environment, 'TEMPORAL_NAMESPACE', 'default'),
  };
}

export interface ClusterStackConfig {
  /** `<STACK_DATA_DIR>/cluster`: apart from `npm start`'s data, so both stacks can live side by side. */
  dataDirectory: string;
  postgresPort: number;
  /** The Temporal frontend's gRPC port; the other Temporal services take the next ports (see docs/deployment.md). */
  temporalPort: number;
  /** First of the Temporal services' membership (gossip) ports; stored as PostgreSQL smallint, so below 32768. */
  temporalMembershipPort: number;
  /** First of the Temporal services' Prometheus ports, one per service. */
  temporalMetricsPort: number;
  temporalHistoryShards: number;
  /** First of the API processes' REST ports, gRPC ports and metrics ports: api-1 takes these, api-2 the next. */
  httpPort: number;
  grpcPort: number;
  /** api-1, api-2, then each worker process in order. */
  metricsPort: number;
  /** Mutual TLS on the Temporal frontend (with certificates the stack makes), on unless switched off. */
  temporalTls: boolean;
  namespace: string;
}

/** Settings of `npm run stack:cluster`; its ports default to a range of their own, away from `npm start`'s. */
export function loadClusterStackConfig(
  environment: Environment = process.env,
  projectRoot: string,
): ClusterStackConfig {
  const temporalMembershipPort = integer(environment, 'CLUSTER_TEMPORAL_MEMBERSHIP_PORT', 16933, {
    min: 1024,
    max: 32767 - 4,
  });
  return {
    dataDirectory: `${stackDataDirectory(environment, projectRoot)}/cluster`,
    postgresPort: port(environment, 'CLUSTER_POSTGRES_PORT', 15432),
    temporalPort: port(environment, 'CLUSTER_TEMPORAL_PORT', 17233),
    temporalMembershipPort,
    temporalMetricsPort: port(environment, 'CLUSTER_TEMPORAL_METRICS_PORT', 17300),
    temporalHistoryShards: integer(environment, 'CLUSTER_TEMPORAL_HISTORY_SHARDS', 4, { min: 1, max: 16384 }),
    httpPort: port(environment, 'CLUSTER_HTTP_PORT', 18080),
    grpcPort: port(environment, 'CLUSTER_GRPC_PORT', 15051),
    metricsPort: port(environment, 'CLUSTER_METRICS_PORT', 19464),
    temporalTls: flag(environment, 'CLUSTER_TEMPORAL_TLS', true),
    namespace: text(environment, 'TEMPORAL_NAMESPACE', 'default'),
  };
}
