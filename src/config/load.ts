// Reads the settings table once at start and shapes it into the Config every process is handed.
import {
  createAnswerBeforeRequestTimeout,
  grpcTls,
  httpTls,
  identityProviderAgrees,
  smsProviderForExternalTransport,
  temporalConnection,
  workflowCacheFitsTaskSlots,
} from './rules';
import { processSettings, schema, tracingSettings, type tokenAlgorithms } from './schema';
import { readSettings, type Environment } from './settings';
import type { AuthConfig, Config, LogFormat, TracingConfig } from './types';

/** LOG_FORMAT alone, for a process that logs before or without reading the rest (the development stacks). */
export function loadLogFormat(environment: Environment = process.env): LogFormat | undefined {
  return readSettings({ LOG_FORMAT: processSettings.LOG_FORMAT }, environment).LOG_FORMAT;
}

/**
 * The OpenTelemetry specification's variables, readable on their own because tracing starts before the rest.
 * Unlike the specification's default exporter (`otlp`), tracing stays off until OTEL_TRACES_EXPORTER=otlp or an
 * OTLP endpoint is set: no process sends spans to a collector nobody configured.
 */
export function loadTracingConfig(environment: Environment = process.env): TracingConfig {
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
    ...(serviceName === undefined ? {} : { serviceName }),
    resourceAttributes: attributes,
    endpoint:
      tracesEndpoint ??
      (baseEndpoint === undefined
        ? 'http://localhost:4318/v1/traces'
        : `${baseEndpoint.replace(/\/+$/, '')}/v1/traces`),
    headers: { ...values.OTEL_EXPORTER_OTLP_HEADERS, ...values.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    sampler: values.OTEL_TRACES_SAMPLER,
    samplerRatio: values.OTEL_TRACES_SAMPLER_ARG,
  };
}

/** Reads the whole configuration; call once in each process's entry point and pass the result down. */
export function loadConfig(environment: Environment = process.env): Config {
  const values = readSettings(schema, environment);
  identityProviderAgrees(values, environment);
  smsProviderForExternalTransport(values);
  const httpTlsFiles = httpTls(values);
  const grpcTlsFiles = grpcTls(values);
  const externalIssuer = values.OIDC_ISSUER;
  const auth: AuthConfig = {
    issuer: externalIssuer ?? values.IDP_ISSUER ?? `http://localhost:${values.HTTP_PORT}`,
    ...(values.OIDC_JWKS_URL !== undefined ? { jwksUrl: values.OIDC_JWKS_URL } : {}),
    audience: values.OIDC_AUDIENCE,
    audienceClaim: values.OIDC_AUDIENCE_CLAIM,
    algorithms: values.OIDC_ALGORITHMS as (typeof tokenAlgorithms)[number][],
    clockToleranceSeconds: values.OIDC_CLOCK_TOLERANCE_SECONDS,
    rolesClaim: values.OIDC_ROLES_CLAIM,
    scopesClaims: values.OIDC_SCOPES_CLAIM,
    defaultRole: values.OIDC_DEFAULT_ROLE === 'none' ? null : values.OIDC_DEFAULT_ROLE,
    embedded:
      externalIssuer !== undefined
        ? null
        : {
            accessTokenTtlSeconds: values.IDP_ACCESS_TOKEN_TTL_SECONDS,
            refreshTokenTtlSeconds: values.IDP_REFRESH_TOKEN_TTL_SECONDS,
            signingKeyRotationSeconds: values.IDP_SIGNING_KEY_ROTATION_SECONDS,
            loginMaxFailuresPerAccount: values.IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT,
            loginMaxFailuresPerAddress: values.IDP_LOGIN_MAX_FAILURES_PER_IP,
            loginThrottleWindowSeconds: values.IDP_LOGIN_THROTTLE_WINDOW_SECONDS,
            docsClient: values.IDP_DOCS_CLIENT,
            clients: values.IDP_CLIENTS,
          },
  };
  return {
    environment: values.NODE_ENV,
    logLevel: values.LOG_LEVEL,
    ...(values.LOG_FORMAT !== undefined ? { logFormat: values.LOG_FORMAT } : {}),
    http: {
      host: values.HTTP_HOST,
      port: values.HTTP_PORT,
      bodyLimitBytes: values.HTTP_BODY_LIMIT_BYTES,
      requestTimeoutMs: values.HTTP_REQUEST_TIMEOUT_MS,
      corsOrigins: values.CORS_ORIGINS,
      trustProxy: values.HTTP_TRUST_PROXY,
      ...(httpTlsFiles !== undefined ? { tls: httpTlsFiles } : {}),
    },
    rateLimit: {
      windowSeconds: values.RATE_LIMIT_WINDOW_SECONDS,
      perUser: values.RATE_LIMIT_PER_USER,
      perAddress: values.RATE_LIMIT_PER_IP,
    },
    idempotency: {
      retentionHours: values.IDEMPOTENCY_KEY_RETENTION_HOURS,
      inFlightLockSeconds: values.IDEMPOTENCY_KEY_LOCK_SECONDS,
      purgeIntervalSeconds: values.IDEMPOTENCY_KEY_PURGE_INTERVAL_SECONDS,
    },
    grpc: {
      host: values.GRPC_HOST,
      port: values.GRPC_PORT,
      ...(grpcTlsFiles !== undefined ? { tls: grpcTlsFiles } : {}),
      allowedClients: values.GRPC_ALLOWED_CLIENTS,
      insecure: values.GRPC_INSECURE,
      maxReceiveMessageBytes: values.GRPC_MAX_RECEIVE_MESSAGE_BYTES,
      maxSendMessageBytes: values.GRPC_MAX_SEND_MESSAGE_BYTES,
      keepaliveTimeMs: values.GRPC_KEEPALIVE_TIME_MS,
      keepaliveTimeoutMs: values.GRPC_KEEPALIVE_TIMEOUT_MS,
      shutdownGraceMs: values.GRPC_SHUTDOWN_GRACE_MS,
      healthCheckIntervalMs: values.GRPC_HEALTH_CHECK_INTERVAL_MS,
    },
    database: { url: values.DATABASE_URL, poolSize: values.DATABASE_POOL_SIZE },
    temporal: temporalConnection(environment),
    worker: {
      taskQueues: values.WORKER_TASK_QUEUES,
      maxConcurrentActivities: values.WORKER_MAX_CONCURRENT_ACTIVITIES,
      maxConcurrentLocalActivities: values.WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES,
      maxConcurrentWorkflowTasks: values.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
      maxCachedWorkflows: workflowCacheFitsTaskSlots(values),
    },
    catalog: {
      routeCacheSeconds: values.CATALOG_ROUTE_CACHE_SECONDS,
      availabilityCacheSeconds: values.CATALOG_AVAILABILITY_CACHE_SECONDS,
      availabilityCacheEntries: values.CATALOG_AVAILABILITY_CACHE_ENTRIES,
    },
    metrics: {
      api: { host: values.METRICS_HOST, port: values.METRICS_PORT },
      worker: { host: values.WORKER_METRICS_HOST, port: values.WORKER_METRICS_PORT },
    },
    booking: {
      holdDurationSeconds: values.BOOKING_HOLD_SECONDS,
      changeCutoffSeconds: values.BOOKING_CHANGE_CUTOFF_SECONDS,
      maxPassengersPerBooking: values.BOOKING_MAX_PASSENGERS,
      maxOpenHoldsPerCustomer: values.BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER,
      createAnswerTimeoutMs: createAnswerBeforeRequestTimeout(
        values.BOOKING_CREATE_ANSWER_TIMEOUT_MS,
        values.HTTP_REQUEST_TIMEOUT_MS,
      ),
      lapsedHoldGraceSeconds: values.BOOKING_LAPSED_HOLD_GRACE_SECONDS,
      startReconcileIntervalSeconds: values.BOOKING_START_RECONCILE_SECONDS,
      noShowGraceSeconds: values.BOARDING_NO_SHOW_GRACE_SECONDS,
    },
    encryption: {
      keyring: values.ENCRYPTION_KEYS,
      activeKeyId: values.ENCRYPTION_ACTIVE_KEY_ID,
      blindIndexKey: values.BLIND_INDEX_KEY,
    },
    codec: {
      corsOrigins: values.CODEC_CORS_ORIGINS,
      allowLoopbackWithoutToken: values.NODE_ENV === 'development',
    },
    auth,
    notifications: {
      transport: values.NOTIFICATIONS_TRANSPORT,
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
      sms: {
        ...(values.SMS_PROVIDER_URL !== undefined ? { providerUrl: values.SMS_PROVIDER_URL } : {}),
        apiKey: values.SMS_PROVIDER_API_KEY ?? '',
        timeoutMs: values.SMS_PROVIDER_TIMEOUT_MS,
      },
    },
    tracing: loadTracingConfig(environment),
  };
}
