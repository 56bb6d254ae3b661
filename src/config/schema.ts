// Every variable the service reads: one row each, grouped as docs/configuration.md shows them (generated from here).
import { taskQueues } from '../domain/task-queues';
import { parseOauthClients } from './oauth-clients';
import {
  ConfigError,
  flag,
  fraction,
  integer,
  keyValuePairs,
  list,
  oneOf,
  port,
  postgresUrl,
  structured,
  temporalEnvconfig,
  text,
  url,
  type SettingTable,
} from './settings';

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const logFormats = ['json', 'pretty'] as const;

export const tracesSamplers = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

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

export const notificationTransports = ['outbox', 'smtp+http'] as const;

/** The Temporal dev server's Web UI, under both names a developer may type. */
export const defaultTemporalUiOrigins = ['http://localhost:8233', 'http://127.0.0.1:8233'] as const;

const day = 86_400;

export const processSettings = {
  NODE_ENV: oneOf({
    values: ['development', 'production', 'test'],
    default: 'development',
    description: 'the development default lets loopback callers use the codec endpoint without a token',
  }),
  LOG_LEVEL: oneOf({
    values: logLevels,
    default: 'info',
    description: 'pino level; sensitive fields are always redacted',
  }),
  LOG_FORMAT: oneOf({
    values: logFormats,
    defaultText: '`pretty` when standard output is a terminal, else `json`',
    description:
      "log lines as JSON (one object a line, for collectors) or coloured text for a person; `npm start` hands its own terminal's choice to the processes it runs",
  }),
  DATABASE_URL: postgresUrl({
    defaultText: 'required (set by `npm start`)',
    description: 'the application database',
    secret: true,
  }),
  DATABASE_POOL_SIZE: integer({ default: 10, min: 1, max: 200, description: 'connections per process' }),
  TEMPORAL_ADDRESS: temporalEnvconfig({
    type: 'host:port',
    defaultText: '`127.0.0.1:7233`',
    description: 'Temporal frontend',
  }),
  TEMPORAL_NAMESPACE: temporalEnvconfig({
    type: 'text',
    defaultText: '`default`',
    description: 'Temporal namespace',
  }),
  TEMPORAL_TLS: temporalEnvconfig({
    type: 'true/false',
    defaultText: '`false`, or `true` when any TLS setting or an API key is set',
    description:
      "TLS to the Temporal frontend (with the system's trusted roots unless a server CA is given); `false` beside any TLS setting or an API key stops the start",
  }),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: temporalEnvconfig({
    type: 'file path',
    defaultText: 'unset',
    description:
      "PEM file of the CA(s) the frontend's certificate must chain to (self-hosted clusters with a private CA); `TEMPORAL_TLS_SERVER_CA_CERT_DATA` gives the PEM itself",
  }),
  TEMPORAL_TLS_CLIENT_CERT_PATH: temporalEnvconfig({
    type: 'file path',
    defaultText: 'unset',
    description:
      'PEM client certificate (chain) for mutual TLS, with `TEMPORAL_TLS_CLIENT_KEY_PATH`; `TEMPORAL_TLS_CLIENT_CERT_DATA` gives the PEM itself',
  }),
  TEMPORAL_TLS_CLIENT_KEY_PATH: temporalEnvconfig({
    type: 'file path',
    defaultText: 'unset',
    description:
      "the client certificate's unencrypted private key (PEM); both or neither, and the key must be the certificate's; `TEMPORAL_TLS_CLIENT_KEY_DATA` gives the PEM itself",
  }),
  TEMPORAL_TLS_SERVER_NAME: temporalEnvconfig({
    type: 'host name',
    defaultText: 'the host of `TEMPORAL_ADDRESS`',
    description:
      "name the frontend's certificate is checked against (and sent as SNI), when it differs from the address, e.g. behind a load balancer",
  }),
  TEMPORAL_API_KEY: temporalEnvconfig({
    type: 'text',
    defaultText: 'unset',
    description:
      'Temporal Cloud API key, sent as `authorization: Bearer <key>` on every call; implies TLS; never logged',
    secret: true,
  }),
  WORKER_TASK_QUEUES: list({
    default: Object.values(taskQueues),
    defaultText: 'all four',
    values: Object.values(taskQueues),
    description: 'the task queues this worker serves',
  }),
  WORKER_MAX_CONCURRENT_ACTIVITIES: integer({
    default: 50,
    min: 1,
    max: 1000,
    description: 'activity slots per worker',
  }),
  WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: integer({
    default: 50,
    min: 1,
    max: 1000,
    description: "local activity slots per worker (a create's seat hold runs as one)",
  }),
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: integer({
    default: 40,
    min: 1,
    max: 1000,
    description: 'workflow task slots per worker',
  }),
  WORKER_MAX_CACHED_WORKFLOWS: integer({
    defaultText: 'a quarter of the V8 heap limit in MiB, 100 to 1,000',
    min: 0,
    max: 100_000,
    description:
      'open bookings a worker keeps in memory (0: none; the rest are evicted and replayed when they next have work); 0 or at least `WORKER_MAX_CONCURRENT_WORKFLOW_TASKS`, which must then be at least 2',
  }),
  METRICS_HOST: text({
    default: '127.0.0.1',
    description:
      "the API process's Prometheus `/metrics` listener, apart from the public ports; loopback unless set (`0.0.0.0` where a network policy guards it)",
  }),
  METRICS_PORT: port({
    default: 9464,
    description: "the API process's `/metrics` port (0: any free port, logged)",
  }),
  WORKER_METRICS_HOST: text({
    default: '127.0.0.1',
    description:
      "the worker process's `/metrics` (the Temporal SDK's metrics and ours), `/healthz` and `/readyz`",
  }),
  WORKER_METRICS_PORT: port({ default: 9465, description: "the worker process's metrics and health port" }),
} satisfies SettingTable;

export const restSettings = {
  HTTP_HOST: text({ default: '0.0.0.0', description: 'REST listener address' }),
  HTTP_PORT: port({ default: 8080, description: 'REST listener port' }),
  HTTP_TLS_CERT: text({
    description:
      'PEM certificate file; with `HTTP_TLS_KEY` the API speaks HTTP/2 over TLS with HTTP/1.1 fallback',
  }),
  HTTP_TLS_KEY: text({ description: "PEM file of the certificate's private key; both or neither" }),
  HTTP_TRUST_PROXY: flag({
    default: false,
    description:
      'trust `X-Forwarded-For` (per-IP limits) and `X-Forwarded-Host`/`-Proto` (the sign-in URLs) from a load balancer',
  }),
  HTTP_BODY_LIMIT_BYTES: integer({
    default: 64 * 1024,
    min: 1024,
    max: 10 * 1024 * 1024,
    description: 'largest request body (413 above)',
  }),
  HTTP_REQUEST_TIMEOUT_MS: integer({
    default: 10_000,
    min: 100,
    max: 300_000,
    description: 'request timeout (503 after it)',
  }),
  CORS_ORIGINS: list({ default: [], description: 'origins allowed by CORS' }),
  CATALOG_ROUTE_CACHE_SECONDS: integer({
    default: 30,
    min: 0,
    max: 3600,
    description:
      'how long each API process answers a route search again without asking PostgreSQL (0: always ask)',
  }),
  CATALOG_AVAILABILITY_CACHE_SECONDS: integer({
    default: 60,
    min: 0,
    max: 3600,
    description:
      "each API process keeps a route's seat availability for a date until PostgreSQL notifies a change to that route's seats, fares or trips, and only while it hears those notifications; this is the longest it keeps one regardless, each kept for a random share of it from four fifths up, so answers read together do not expire together (0: always ask)",
  }),
  CATALOG_AVAILABILITY_CACHE_ENTRIES: integer({
    default: 10_000,
    min: 1,
    max: 1_000_000,
    description:
      'availability answers (a route on a date) kept per API process, least recently read leaving first; about 12 KiB each for 4 trips of 50 seats',
  }),
  CODEC_CORS_ORIGINS: list({
    default: defaultTemporalUiOrigins,
    description:
      'Temporal UI origins allowed by CORS on the codec endpoint only (`npm start` sets its own UI port)',
  }),
  RATE_LIMIT_WINDOW_SECONDS: integer({ default: 60, min: 1, max: 3600, description: 'rate-limit window' }),
  RATE_LIMIT_PER_USER: integer({
    default: 300,
    min: 0,
    max: 1_000_000,
    description: 'requests per window and user (0 switches the limit off); counted per API process',
  }),
  RATE_LIMIT_PER_IP: integer({
    default: 1200,
    min: 0,
    max: 1_000_000,
    description: 'requests per window and client address (0 switches the limit off); counted per API process',
  }),
  IDEMPOTENCY_KEY_RETENTION_HOURS: integer({
    default: 24,
    min: 24,
    max: 24 * 365,
    description: 'how long `Idempotency-Key` answers are kept',
  }),
  IDEMPOTENCY_KEY_LOCK_SECONDS: integer({
    default: 120,
    min: 1,
    max: 3600,
    description: 'how long a key in flight blocks a repeat (409 with Retry-After)',
  }),
  IDEMPOTENCY_KEY_PURGE_INTERVAL_SECONDS: integer({
    default: 600,
    min: 10,
    max: day,
    description: 'how often expired keys are deleted',
  }),
} satisfies SettingTable;

export const grpcSettings = {
  GRPC_HOST: text({ default: '0.0.0.0', description: 'gRPC listener address' }),
  GRPC_PORT: port({ default: 50051, description: 'gRPC listener port' }),
  GRPC_TLS_CA: text({
    defaultText: 'required unless `GRPC_INSECURE` (made by `npm start`)',
    description: 'PEM file of the CA client certificates must chain to',
  }),
  GRPC_TLS_CERT: text({
    defaultText: 'required unless `GRPC_INSECURE` (made by `npm start`)',
    description: "PEM file of the server's certificate",
  }),
  GRPC_TLS_KEY: text({
    defaultText: 'required unless `GRPC_INSECURE` (made by `npm start`)',
    description: "PEM file of the server certificate's private key",
  }),
  GRPC_ALLOWED_CLIENTS: list({
    default: [],
    defaultText: 'required with TLS (`booking-cli` under `npm start`)',
    description: 'client certificate identities (CN or SAN) allowed to connect',
  }),
  GRPC_INSECURE: flag({ default: false, description: 'plaintext gRPC, for development only' }),
  GRPC_MAX_RECEIVE_MESSAGE_BYTES: integer({
    default: 64 * 1024,
    min: 1024,
    max: 64 * 1024 * 1024,
    description: 'largest message received',
  }),
  GRPC_MAX_SEND_MESSAGE_BYTES: integer({
    default: 4 * 1024 * 1024,
    min: 1024,
    max: 64 * 1024 * 1024,
    description: 'largest message sent',
  }),
  GRPC_KEEPALIVE_TIME_MS: integer({
    default: 60_000,
    min: 1000,
    max: 2 * 3600 * 1000,
    description: 'keepalive ping interval',
  }),
  GRPC_KEEPALIVE_TIMEOUT_MS: integer({
    default: 20_000,
    min: 1000,
    max: 600_000,
    description: 'how long a keepalive ping waits for its answer',
  }),
  GRPC_SHUTDOWN_GRACE_MS: integer({
    default: 10_000,
    min: 0,
    max: 600_000,
    description: 'how long shutdown waits for calls in flight',
  }),
  GRPC_HEALTH_CHECK_INTERVAL_MS: integer({
    default: 5000,
    min: 100,
    max: 600_000,
    description: 'how often grpc.health.v1 re-checks PostgreSQL and Temporal',
  }),
} satisfies SettingTable;

export const identitySettings = {
  OIDC_ISSUER: url({
    defaultText: 'unset: the embedded provider issues tokens',
    description: 'an external OpenID Connect issuer; setting it switches the embedded provider off',
  }),
  OIDC_JWKS_URL: url({
    defaultText: 'discovered from the issuer',
    description: "JWKS URL, when the issuer's discovery document is not to be used; with `OIDC_ISSUER` only",
  }),
  OIDC_AUDIENCE: text({ default: 'bus-booking-api', description: 'required audience' }),
  OIDC_AUDIENCE_CLAIM: text({
    default: 'aud',
    description: 'claim holding the audience (`client_id` for Cognito)',
  }),
  OIDC_ALGORITHMS: list({
    default: ['RS256'],
    values: tokenAlgorithms,
    description: 'accepted signature algorithms; the embedded provider needs `RS256` among them',
  }),
  OIDC_CLOCK_TOLERANCE_SECONDS: integer({
    default: 30,
    min: 0,
    max: 300,
    description: 'clock skew allowed on `exp`/`nbf`',
  }),
  OIDC_ROLES_CLAIM: text({
    default: 'roles',
    description: 'claim with the roles (`realm_access.roles` is always read too)',
  }),
  OIDC_SCOPES_CLAIM: list({
    default: ['scope', 'scp'],
    description:
      'claims (names or dotted paths) whose scopes are granted together, each a space-separated string or a list; with `OIDC_ISSUER` only',
  }),
  OIDC_DEFAULT_ROLE: oneOf({
    values: ['customer', 'none'],
    default: 'customer',
    description: 'role of a valid token that names none of ours (`none` refuses it)',
  }),
  IDP_ISSUER: url({
    defaultText: '`http://localhost:$HTTP_PORT`',
    description: "the embedded provider's issuer URL",
  }),
  IDP_ACCESS_TOKEN_TTL_SECONDS: integer({
    default: 900,
    min: 1,
    max: day,
    description: 'access-token lifetime',
  }),
  IDP_REFRESH_TOKEN_TTL_SECONDS: integer({
    default: 14 * day,
    min: 60,
    max: 365 * day,
    description: 'refresh-token lifetime (14 days)',
  }),
  IDP_SIGNING_KEY_ROTATION_SECONDS: integer({
    default: 30 * day,
    min: 3600,
    max: 365 * day,
    description:
      'signing-key rotation period (30 days); older public keys stay published until their tokens expire',
  }),
  IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: integer({
    default: 5,
    min: 1,
    max: 1000,
    description: 'failed logins of one account before 429',
  }),
  IDP_LOGIN_MAX_FAILURES_PER_IP: integer({
    default: 20,
    min: 1,
    max: 100_000,
    description: 'failed logins from one address before 429',
  }),
  IDP_LOGIN_THROTTLE_WINDOW_SECONDS: integer({
    default: 900,
    min: 1,
    max: day,
    description: 'throttling window',
  }),
  IDP_DOCS_CLIENT: flag({
    default: true,
    description: 'register Swagger UI at `/docs` as OAuth client `bus-booking-docs`',
  }),
  IDP_CLIENTS: structured({
    type: 'JSON array',
    defaultText: 'none',
    default: [],
    parse: parseOauthClients,
    description: 'OAuth clients, see [Identity provider](security-and-identity.md#identity-provider)',
  }),
} satisfies SettingTable;

export const encryptionSettings = {
  ENCRYPTION_KEYS: text({
    required: true,
    defaultText: 'required (generated by `npm start`)',
    secret: true,
    description:
      '`keyId:base64(32 bytes)` pairs, comma-separated; old keys stay listed after rotation; also encrypt Temporal payloads',
  }),
  ENCRYPTION_ACTIVE_KEY_ID: text({
    required: true,
    defaultText: 'required (generated by `npm start`)',
    description: 'the key new values (columns and Temporal payloads) are encrypted with',
  }),
  BLIND_INDEX_KEY: text({
    required: true,
    defaultText: 'required (generated by `npm start`)',
    secret: true,
    description: 'base64, at least 32 bytes; HMAC key for email lookups',
  }),
} satisfies SettingTable;

export const bookingSettings = {
  BOOKING_HOLD_SECONDS: integer({
    default: 15 * 60,
    min: 1,
    max: day,
    description: 'how long seats are held awaiting payment',
  }),
  BOOKING_CHANGE_CUTOFF_SECONDS: integer({
    default: 3600,
    min: 0,
    max: 7 * day,
    description: 'changes close this long before departure',
  }),
  BOOKING_MAX_PASSENGERS: integer({ default: 9, min: 1, max: 50, description: 'passengers per booking' }),
  BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: integer({
    default: 5,
    min: 1,
    max: 1000,
    description:
      'unpaid bookings one customer may hold at once (429 above), counted atomically across API processes, creates in flight included',
  }),
  BOOKING_CREATE_ANSWER_TIMEOUT_MS: integer({
    defaultText: '80% of `HTTP_REQUEST_TIMEOUT_MS` (`8000`)',
    min: 1,
    max: 300_000,
    description:
      "how long a create waits for its seats to be held, counted from the request's arrival (a create that used it all before its workflow could start makes nothing and answers 503 UNAVAILABLE); past it the booking is still being made and the create answers 202 with its id (gRPC: UNAVAILABLE, reason `BOOKING_PROCESSING`); payments, changes, cancels and trip cancels answer by the same time: 202 (gRPC BOOKING_PROCESSING) when their workflow has them and is still at work, 503 only when nothing was sent; must be below `HTTP_REQUEST_TIMEOUT_MS`",
  }),
  BOOKING_LAPSED_HOLD_GRACE_SECONDS: integer({
    default: 60,
    min: 0,
    max: day,
    description: 'a hold this long past its expiry no longer blocks the seat for others',
  }),
  BOOKING_START_RECONCILE_SECONDS: integer({
    default: 5,
    min: 1,
    max: 3600,
    description:
      'how often each API process starts the bookings whose id a create gave out (201, 202, `BOOKING_PROCESSING`) but whose workflow start never reached Temporal (a failed start after the answer, an API process killed right after it)',
  }),
  BOARDING_NO_SHOW_GRACE_SECONDS: integer({
    default: 10 * 60,
    min: 0,
    max: day,
    description:
      "how long past the departure from a booking's boarding stop its passengers not yet boarded become no-shows (bookings started earlier keep the value they started with)",
  }),
} satisfies SettingTable;

export const notificationSettings = {
  NOTIFICATIONS_TRANSPORT: oneOf({
    values: notificationTransports,
    default: 'outbox',
    description: '`outbox` (files a developer reads) or `smtp+http` (real email and SMS providers)',
  }),
  NOTIFICATIONS_OUTBOX_DIR: text({
    default: '.data/outbox',
    description:
      'where the outbox writes `email/*.eml` and `sms/*.json`, from the project root unless absolute (the stacks of `npm start` and `npm run stack:cluster` put it in their data folder)',
  }),
  NOTIFICATIONS_EMAIL_FROM: text({
    default: 'Bus Bookings <no-reply@bookings.example>',
    description: 'sender address',
  }),
  SMTP_HOST: text({ default: 'localhost', description: 'SMTP server (nodemailer)' }),
  SMTP_PORT: port({ default: 587, description: 'SMTP port' }),
  SMTP_SECURE: flag({
    default: false,
    description: 'TLS from the first byte (port 465) rather than STARTTLS',
  }),
  SMTP_USER: text({ default: '', description: 'SMTP user name' }),
  SMTP_PASSWORD: text({ default: '', description: 'SMTP password', secret: true }),
  SMTP_TIMEOUT_MS: integer({ default: 10_000, min: 100, max: 300_000, description: 'SMTP timeout' }),
  SMS_PROVIDER_URL: url({
    defaultText: 'required with `smtp+http`',
    description: 'HTTP SMS provider endpoint',
  }),
  SMS_PROVIDER_API_KEY: text({
    defaultText: 'required with `smtp+http`',
    description: 'HTTP SMS provider key',
    secret: true,
  }),
  SMS_PROVIDER_TIMEOUT_MS: integer({
    default: 10_000,
    min: 100,
    max: 300_000,
    description: 'SMS provider timeout',
  }),
} satisfies SettingTable;

export const paymentGateways = ['simulator', 'stripe'] as const;

export const paymentSettings = {
  PAYMENT_GATEWAY: oneOf({
    values: paymentGateways,
    default: 'simulator',
    description:
      'the card processor the worker charges and refunds through: the simulator (its test tokens, a ledger in PostgreSQL) or Stripe (see [Payments](payments.md))',
  }),
  STRIPE_SECRET_KEY: text({
    defaultText: 'required with `stripe`',
    description: 'Stripe secret API key, `sk_test_…` (test mode) or `sk_live_…`',
    secret: true,
  }),
  STRIPE_API_URL: url({
    defaultText: "unset: Stripe's own API",
    description:
      'another Stripe-compatible API, such as localstripe in the tests (`http://127.0.0.1:8420`); with an `sk_test_` key only, so a live key never leaves for anyone but Stripe',
  }),
  STRIPE_WEBHOOK_SECRET: text({
    defaultText: 'required with `stripe`',
    description: "the webhook endpoint's signing secret, `whsec_…`, that Stripe's events are verified with",
    secret: true,
  }),
  PAYMENT_RECONCILE_INTERVAL_MINUTES: integer({
    default: 5,
    min: 1,
    max: 60,
    description:
      "how often the worker's Temporal schedule `payment-reconciliation` compares the processor's recent payments and refunds with the ledger and applies what a lost webhook left out; each pass looks back over `BOOKING_HOLD_SECONDS` plus two intervals",
  }),
} satisfies SettingTable;

export const defaultWebhookRetrySchedule = [
  0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
] as const;

/** `0,5,300`: whole seconds to wait before each attempt, the first 0, so an event is tried at once. */
export function parseRetrySchedule(value: string, variable: string): number[] {
  const items = value.split(',').map((item) => item.trim());
  if (!items.every((item) => /^\d{1,9}$/.test(item))) {
    throw new ConfigError(variable, `must be comma-separated whole numbers of seconds, got "${value}"`);
  }
  const seconds = items.map(Number);
  if (seconds[0] !== 0)
    throw new ConfigError(variable, 'must start with 0: the first attempt is made at once');
  return seconds;
}

export const webhookSettings = {
  WEBHOOK_ALLOW_HTTP: flag({
    default: false,
    description:
      'lets partners register `http://` webhook endpoints besides `https://` ones (development and tests only)',
  }),
  WEBHOOK_ALLOW_LIST: list({
    default: [],
    description:
      'hosts and CIDR ranges webhook deliveries may reach although the outbound guard refuses them otherwise (loopback, private and link-local addresses), e.g. `127.0.0.1/32,receiver.internal`',
  }),
  WEBHOOK_RETRY_SCHEDULE_SECONDS: structured({
    type: 'comma-separated seconds',
    defaultText: `\`${defaultWebhookRetrySchedule.join(',')}\``,
    default: [...defaultWebhookRetrySchedule],
    parse: parseRetrySchedule,
    description:
      'the wait before each attempt of a webhook delivery, the first 0; as many attempts as entries, after which the delivery is failed',
  }),
} satisfies SettingTable;

/** The OpenTelemetry specification's variables; tracing is off until an exporter or an endpoint is named. */
export const tracingSettings = {
  OTEL_TRACES_EXPORTER: oneOf({
    values: ['otlp', 'none'],
    description:
      '`otlp` turns tracing on (to the default endpoint if none is set); `none` keeps it off whatever else is set',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: url({
    defaultText: 'unset (`http://localhost:4318` with `otlp`)',
    description: 'OTLP/HTTP base URL; `/v1/traces` is appended; setting it turns tracing on',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url({
    description:
      'full OTLP/HTTP traces URL, used as is (wins over the base URL); setting it turns tracing on',
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: oneOf({
    values: ['http/protobuf'],
    default: 'http/protobuf',
    description: 'the only protocol shipped; anything else stops the start',
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: oneOf({
    values: ['http/protobuf'],
    default: 'http/protobuf',
    description: 'the same, for traces only',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: keyValuePairs({
    description: "sent with each export, e.g. a backend's API key",
    secret: true,
  }),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValuePairs({
    description: 'sent with each traces export, beside and over `OTEL_EXPORTER_OTLP_HEADERS`',
    secret: true,
  }),
  OTEL_SERVICE_NAME: text({
    defaultText: '`bus-booking-api` / `bus-booking-worker`',
    description: "`service.name` of the process's spans",
  }),
  OTEL_RESOURCE_ATTRIBUTES: keyValuePairs({
    description: 'resource attributes, e.g. `deployment.environment=staging,service.version=1.4.0`',
  }),
  OTEL_TRACES_SAMPLER: oneOf({
    values: tracesSamplers,
    default: 'parentbased_always_on',
    description: 'which spans are recorded',
  }),
  OTEL_TRACES_SAMPLER_ARG: fraction({ default: 1, description: 'the ratio of the `traceidratio` samplers' }),
  OTEL_SDK_DISABLED: flag({ default: false, description: '`true` switches tracing off' }),
} satisfies SettingTable;

/** The tables in the order the reference documents them. */
export const schemaSections = [
  { title: 'Processes and connections', settings: processSettings },
  { title: 'REST', settings: restSettings },
  { title: 'gRPC', settings: grpcSettings },
  { title: 'Identity', settings: identitySettings },
  { title: 'Encryption', settings: encryptionSettings },
  { title: 'Bookings', settings: bookingSettings },
  { title: 'Notifications', settings: notificationSettings },
  { title: 'Payments', settings: paymentSettings },
  { title: 'Partner webhooks', settings: webhookSettings },
  { title: 'Tracing (OpenTelemetry)', settings: tracingSettings },
] as const;

export const schema = {
  ...processSettings,
  ...restSettings,
  ...grpcSettings,
  ...identitySettings,
  ...encryptionSettings,
  ...bookingSettings,
  ...notificationSettings,
  ...paymentSettings,
  ...webhookSettings,
  ...tracingSettings,
};
