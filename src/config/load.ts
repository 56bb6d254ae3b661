// Reads the settings table once at start and shapes it into the Config every process is handed (typed by inference).
import {
  createAnswerBeforeRequestTimeout,
  grpcTls,
  httpTls,
  identityProviderAgrees,
  paymentGateway,
  smsProviderForExternalTransport,
  temporalConnection,
  workflowCacheFitsTaskSlots,
} from './rules';
import { processSettings, schema, tracingSettings } from './schema';
import { readSettings, type Environment } from './settings';
import type { LogFormat, TokenAlgorithm } from './types';

/** LOG_FORMAT alone, for a process that logs before or without reading the rest (the development stacks). */
export function loadLogFormat(environment: Environment = process.env): LogFormat | undefined {
  return readSettings({ LOG_FORMAT: processSettings.LOG_FORMAT }, environment).LOG_FORMAT;
}

/**
 * The OpenTelemetry specification's variables, readable on their own because tracing starts before the rest.
 * Unlike the specification's default exporter (`otlp`), tracing stays off until OTEL_TRACES_EXPORTER=otlp or an
 * OTLP endpoint is set: no process sends spans to a collector nobody configured.
 */
export function loadTracingConfig(environment: Environment = process.env) {
  const values = readSettings(tracingSettings, environment);
  const tracesEndpoint = values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const baseEndpoint = values.OTEL_EXPORTER_OTLP_ENDPOINT;
  const attributes = values.OTEL_RESOURCE_ATTRIBUTES;
  const serviceName = values.OTEL_SERVICE_NAME ?? attributes['service.name'];
  const exporter = values.OTEL_TRACES_EXPORTER;
  return {
    enabled:
      !values.OTEL_SDK_DISABLED &&
      (exporter === 'otlp' || (exporter === undefined && (tracesEndpoint ?? baseEndpoint) !== undefined)),
    /** OTEL_SERVICE_NAME (or `service.name` among the resource attributes); each process has its own default. */
    ...(serviceName === undefined ? {} : { serviceName }),
    /** OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs describing the deployment (environment, version, region). */
    resourceAttributes: attributes,
    /** The OTLP/HTTP protobuf traces URL, `/v1/traces` included. */
    endpoint:
      tracesEndpoint ??
      (baseEndpoint === undefined
        ? 'http://localhost:4318/v1/traces'
        : `${baseEndpoint.replace(/\/+$/, '')}/v1/traces`),
    /** Sent with every export, e.g. a backend's API key. */
    headers: { ...values.OTEL_EXPORTER_OTLP_HEADERS, ...values.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    sampler: values.OTEL_TRACES_SAMPLER,
    /** The ratio of the `traceidratio` samplers, 0 to 1. */
    samplerRatio: values.OTEL_TRACES_SAMPLER_ARG,
  };
}

/** Reads the whole configuration; call once in each process's entry point and pass the result down. */
export function loadConfig(environment: Environment = process.env) {
  const values = readSettings(schema, environment);
  identityProviderAgrees(values, environment);
  smsProviderForExternalTransport(values);
  const httpTlsFiles = httpTls(values);
  const grpcTlsFiles = grpcTls(values);
  const externalIssuer = values.OIDC_ISSUER;
  const auth = {
    /** The only issuer whose tokens are accepted: OIDC_ISSUER, or the embedded identity provider's own. */
    issuer: externalIssuer ?? values.IDP_ISSUER ?? `http://localhost:${values.HTTP_PORT}`,
    /** Where the signing keys are; absent means discovered from `<issuer>/.well-known/openid-configuration`. */
    ...(values.OIDC_JWKS_URL !== undefined ? { jwksUrl: values.OIDC_JWKS_URL } : {}),
    audience: values.OIDC_AUDIENCE,
    /** Claim compared with `audience`: `aud` normally, `client_id` for Cognito access tokens. */
    audienceClaim: values.OIDC_AUDIENCE_CLAIM,
    algorithms: values.OIDC_ALGORITHMS as TokenAlgorithm[],
    clockToleranceSeconds: values.OIDC_CLOCK_TOLERANCE_SECONDS,
    /** Claim name or dot path holding the roles; Keycloak's `realm_access.roles` is always tried as well. */
    rolesClaim: values.OIDC_ROLES_CLAIM,
    /** Claims (names or dot paths) whose scopes are granted together: `scope` and `scp` unless configured. */
    scopesClaims: values.OIDC_SCOPES_CLAIM,
    /** Role of a caller whose token names none of ours (external providers often send no roles); null: none. */
    defaultRole: values.OIDC_DEFAULT_ROLE === 'none' ? null : values.OIDC_DEFAULT_ROLE,
    /** The embedded identity provider, on unless OIDC_ISSUER names an external issuer. */
    embedded:
      externalIssuer !== undefined
        ? null
        : {
            accessTokenTtlSeconds: values.IDP_ACCESS_TOKEN_TTL_SECONDS,
            refreshTokenTtlSeconds: values.IDP_REFRESH_TOKEN_TTL_SECONDS,
            /** Age at which the signing key is replaced; older public keys stay published until their tokens expire. */
            signingKeyRotationSeconds: values.IDP_SIGNING_KEY_ROTATION_SECONDS,
            loginMaxFailuresPerAccount: values.IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT,
            loginMaxFailuresPerAddress: values.IDP_LOGIN_MAX_FAILURES_PER_IP,
            loginThrottleWindowSeconds: values.IDP_LOGIN_THROTTLE_WINDOW_SECONDS,
            /** Registers Swagger UI at /docs as a public authorization-code client (IDP_DOCS_CLIENT). */
            docsClient: values.IDP_DOCS_CLIENT,
            /** The other OAuth clients of the authorization server (IDP_CLIENTS). */
            clients: values.IDP_CLIENTS,
          },
  };
  return {
    environment: values.NODE_ENV,
    logLevel: values.LOG_LEVEL,
    /** LOG_FORMAT when set; absent, the logger writes pretty lines to a terminal and JSON anywhere else. */
    ...(values.LOG_FORMAT !== undefined ? { logFormat: values.LOG_FORMAT } : {}),
    http: {
      host: values.HTTP_HOST,
      port: values.HTTP_PORT,
      bodyLimitBytes: values.HTTP_BODY_LIMIT_BYTES,
      requestTimeoutMs: values.HTTP_REQUEST_TIMEOUT_MS,
      corsOrigins: values.CORS_ORIGINS,
      /** Take the client address from X-Forwarded-For; only behind a proxy that sets it. */
      trustProxy: values.HTTP_TRUST_PROXY,
      /** PEM files; when given, REST serves HTTP/2 over TLS with HTTP/1.1 fallback on the same port. */
      ...(httpTlsFiles !== undefined ? { tls: httpTlsFiles } : {}),
    },
    /** Requests per window and client; in-memory counters per API process (see src/api/rest/rate-limits.ts). */
    rateLimit: {
      windowSeconds: values.RATE_LIMIT_WINDOW_SECONDS,
      /** 0 turns the per-user limit off. */
      perUser: values.RATE_LIMIT_PER_USER,
      /** 0 turns the per-address limit off. */
      perAddress: values.RATE_LIMIT_PER_IP,
    },
    idempotency: {
      /** How long an Idempotency-Key and its response are kept; at least 24 hours. */
      retentionHours: values.IDEMPOTENCY_KEY_RETENTION_HOURS,
      /** After this long a key whose request never finished (a crashed process) may be taken by a retry. */
      inFlightLockSeconds: values.IDEMPOTENCY_KEY_LOCK_SECONDS,
      purgeIntervalSeconds: values.IDEMPOTENCY_KEY_PURGE_INTERVAL_SECONDS,
    },
    grpc: {
      host: values.GRPC_HOST,
      port: values.GRPC_PORT,
      /** PEM files for mutual TLS; all three or none (then only a GRPC_INSECURE server may start). */
      ...(grpcTlsFiles !== undefined ? { tls: grpcTlsFiles } : {}),
      /** Client certificate CNs or DNS/URI SANs of the services allowed to call. */
      allowedClients: values.GRPC_ALLOWED_CLIENTS,
      /** Plaintext, no client certificates: an explicit development switch, never a fallback. */
      insecure: values.GRPC_INSECURE,
      maxReceiveMessageBytes: values.GRPC_MAX_RECEIVE_MESSAGE_BYTES,
      maxSendMessageBytes: values.GRPC_MAX_SEND_MESSAGE_BYTES,
      keepaliveTimeMs: values.GRPC_KEEPALIVE_TIME_MS,
      keepaliveTimeoutMs: values.GRPC_KEEPALIVE_TIMEOUT_MS,
      /** How long a stopping server lets calls in flight finish before cutting them off. */
      shutdownGraceMs: values.GRPC_SHUTDOWN_GRACE_MS,
      healthCheckIntervalMs: values.GRPC_HEALTH_CHECK_INTERVAL_MS,
    },
    database: { url: values.DATABASE_URL, poolSize: values.DATABASE_POOL_SIZE },
    temporal: temporalConnection(environment),
    worker: {
      /** Task queues this worker process serves; all of them unless narrowed for separate scaling. */
      taskQueues: values.WORKER_TASK_QUEUES,
      maxConcurrentActivities: values.WORKER_MAX_CONCURRENT_ACTIVITIES,
      /** Local activity slots: the seat hold of a create runs as one, inside the workflow task. */
      maxConcurrentLocalActivities: values.WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES,
      maxConcurrentWorkflowTasks: values.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
      /** Open bookings kept in the worker's memory at most (0: none); evicted ones replay when they next have work. */
      maxCachedWorkflows: workflowCacheFitsTaskSlots(values),
    },
    catalog: {
      /** How long a page of the route catalogue is answered again without PostgreSQL; 0 asks every time. */
      routeCacheSeconds: values.CATALOG_ROUTE_CACHE_SECONDS,
      /** The longest a seat availability answer is kept while no change to its route is heard; 0 keeps none. */
      availabilityCacheSeconds: values.CATALOG_AVAILABILITY_CACHE_SECONDS,
      /** Seat availability answers (a route on a date) kept at most per API process. */
      availabilityCacheEntries: values.CATALOG_AVAILABILITY_CACHE_ENTRIES,
    },
    /** Prometheus /metrics listeners, apart from the public ports: loopback unless a deployment opens them. */
    metrics: {
      /** The API process's (METRICS_HOST, METRICS_PORT). */
      api: { host: values.METRICS_HOST, port: values.METRICS_PORT },
      /** The worker process's, with its /healthz and /readyz (WORKER_METRICS_HOST, WORKER_METRICS_PORT). */
      worker: { host: values.WORKER_METRICS_HOST, port: values.WORKER_METRICS_PORT },
    },
    booking: {
      holdDurationSeconds: values.BOOKING_HOLD_SECONDS,
      changeCutoffSeconds: values.BOOKING_CHANGE_CUTOFF_SECONDS,
      maxPassengersPerBooking: values.BOOKING_MAX_PASSENGERS,
      maxOpenHoldsPerCustomer: values.BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER,
      /**
       * How long a create waits for its seats to be held before answering that the booking is still being made
       * (REST 202, gRPC BOOKING_PROCESSING): below HTTP_REQUEST_TIMEOUT_MS, so no create times out after starting.
       */
      createAnswerTimeoutMs: createAnswerBeforeRequestTimeout(
        values.BOOKING_CREATE_ANSWER_TIMEOUT_MS,
        values.HTTP_REQUEST_TIMEOUT_MS,
      ),
      /** Seconds past its expiry before a lapsed hold of an unconfirmed booking may be taken by another booking. */
      lapsedHoldGraceSeconds: values.BOOKING_LAPSED_HOLD_GRACE_SECONDS,
      /**
       * How often an API process looks for creates whose booking id was given out but whose workflow start never
       * reached Temporal (a failed start after a 202, a crash), and starts them.
       */
      startReconcileIntervalSeconds: values.BOOKING_START_RECONCILE_SECONDS,
      /** How long past its departure from a boarding stop the bus waits before passengers not aboard are no-shows. */
      noShowGraceSeconds: values.BOARDING_NO_SHOW_GRACE_SECONDS,
    },
    encryption: {
      /** `keyId:base64key` pairs; old keys stay here after rotation so old rows still decrypt. */
      keyring: values.ENCRYPTION_KEYS,
      activeKeyId: values.ENCRYPTION_ACTIVE_KEY_ID,
      blindIndexKey: values.BLIND_INDEX_KEY,
    },
    /** The codec endpoint (`/codec/decode`, `/codec/encode`) operators point the Temporal UI and CLI at. */
    codec: {
      /** Browser origins of the Temporal UI, allowed by CORS on the codec endpoint only. */
      corsOrigins: values.CODEC_CORS_ORIGINS,
      /** Development only: loopback callers without a token may use it, so the embedded stack's UI decodes. */
      allowLoopbackWithoutToken: values.NODE_ENV === 'development',
    },
    auth,
    notifications: {
      /** `outbox`: files a developer reads (embedded stack); `smtp+http`: an SMTP server and an HTTP SMS provider. */
      transport: values.NOTIFICATIONS_TRANSPORT,
      /** Where the outbox transport writes; a relative path is taken from the project root. */
      outboxDirectory: values.NOTIFICATIONS_OUTBOX_DIR,
      emailFrom: values.NOTIFICATIONS_EMAIL_FROM,
      smtp: {
        host: values.SMTP_HOST,
        port: values.SMTP_PORT,
        secure: values.SMTP_SECURE,
        user: values.SMTP_USER,
        password: values.SMTP_PASSWORD,
        timeoutMs: values.SMTP_TIMEOUT_MS,
      },
      /** providerUrl and apiKey are required with the smtp+http transport. */
      sms: {
        ...(values.SMS_PROVIDER_URL !== undefined ? { providerUrl: values.SMS_PROVIDER_URL } : {}),
        apiKey: values.SMS_PROVIDER_API_KEY ?? '',
        timeoutMs: values.SMS_PROVIDER_TIMEOUT_MS,
      },
    },
    /**
     * The card processor of the payment activities: the simulator, or Stripe with its secret key, its API's URL
     * when it is not Stripe's own (localstripe), and the webhook signing secret.
     */
    payments: paymentGateway(values),
    /** The schedule that applies the outcomes lost webhooks left behind (workflows/payment-reconciliation.ts). */
    paymentReconciliation: {
      intervalMinutes: values.PAYMENT_RECONCILE_INTERVAL_MINUTES,
      /** Back over the longest an intent stays open (the hold) and two passes, so one missed pass loses nothing. */
      lookbackSeconds: values.BOOKING_HOLD_SECONDS + 2 * 60 * values.PAYMENT_RECONCILE_INTERVAL_MINUTES,
    },
    /** Partners' webhook endpoints and the deliveries to them. */
    webhooks: {
      /** Whether an endpoint may be an `http://` URL (development); otherwise `https://` only. */
      allowHttp: values.WEBHOOK_ALLOW_HTTP,
      /** Hosts and CIDR ranges the outbound guard lets deliveries reach although it refuses them otherwise. */
      allowList: values.WEBHOOK_ALLOW_LIST,
      /** Seconds to wait before each attempt, the first 0; its length is the number of attempts. */
      retryScheduleSeconds: values.WEBHOOK_RETRY_SCHEDULE_SECONDS,
    },
    tracing: loadTracingConfig(environment),
  };
}

/** What loadConfig builds from the settings table; each field's meaning is written where it is built, above. */
export type Config = ReturnType<typeof loadConfig>;
export type AuthConfig = Config['auth'];
export type EmbeddedIdentityProviderConfig = NonNullable<AuthConfig['embedded']>;
export type NotificationsConfig = Config['notifications'];
export type PaymentsConfig = Config['payments'];
/** OpenTelemetry tracing, from the standard OTEL_* variables; off unless an exporter or endpoint is named. */
export type TracingConfig = ReturnType<typeof loadTracingConfig>;
