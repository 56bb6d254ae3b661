// The typed configuration every process is handed: what loadConfig builds from the settings table.
import type { OAuthClientRegistration } from './oauth-clients';
import type {
  logFormats,
  logLevels,
  notificationTransports,
  tokenAlgorithms,
  tracesSamplers,
} from './schema';

export type LogLevel = (typeof logLevels)[number];
export type LogFormat = (typeof logFormats)[number];
export type TokenAlgorithm = (typeof tokenAlgorithms)[number];

export interface Config {
  environment: 'development' | 'production' | 'test';
  logLevel: LogLevel;
  /** LOG_FORMAT when set; absent, the logger writes pretty lines to a terminal and JSON anywhere else. */
  logFormat?: LogFormat;
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
    /** How long past its departure from a boarding stop the bus waits before passengers not aboard are no-shows. */
    noShowGraceSeconds: number;
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

/** The Temporal frontend and how to reach it: the TEMPORAL_* variables of Temporal's environment configuration. */
export interface TemporalConfig {
  address: string;
  namespace: string;
  /** Present when the frontend is reached over TLS: TEMPORAL_TLS, or implied by any TLS setting or an API key. */
  tls?: TemporalTlsConfig;
  /** Temporal Cloud API key (TEMPORAL_API_KEY), sent as `authorization: Bearer <key>`; never logged. */
  apiKey?: string;
}

/** A PEM given as a file (`TEMPORAL_TLS_*_PATH`) or inline (`TEMPORAL_TLS_*_DATA`); read where it is used. */
export type PemSource = { variable: string } & ({ path: string } | { data: string });

export interface TemporalTlsConfig {
  /** CA certificates the server's certificate must chain to (TEMPORAL_TLS_SERVER_CA_CERT_*); absent: the system's roots. */
  serverCa?: PemSource;
  /** Mutual TLS: the client certificate (chain) and its private key (TEMPORAL_TLS_CLIENT_CERT_*, _KEY_*). */
  clientCertificate?: { certificate: PemSource; privateKey: PemSource };
  /** Name the server certificate is checked against, sent as SNI; absent: the host of TEMPORAL_ADDRESS. */
  serverName?: string;
}

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
