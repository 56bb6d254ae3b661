// The cross-field rules of the configuration: defaults computed from other settings, and settings that must agree.
import { loadClientConfigProfile } from '@temporalio/envconfig';
import type { ConfigDataSource } from '@temporalio/envconfig';
import { getHeapStatistics } from 'node:v8';
import type {
  processSettings,
  restSettings,
  grpcSettings,
  identitySettings,
  notificationSettings,
  paymentSettings,
} from './schema';
import { ConfigError, type Environment, type SettingValues } from './settings';
import type { PemSource, TemporalConfig } from './types';

/** By default the cache holds a quarter of the V8 heap limit in MiB as bookings (100 to 1,000), never fewer than the workflow tasks that may run at once. */
export function defaultMaxCachedWorkflows(heapLimitMiB: number, maxConcurrentWorkflowTasks: number): number {
  const byMemory = Math.min(1000, Math.max(100, Math.floor(heapLimitMiB / 4)));
  return Math.max(byMemory, maxConcurrentWorkflowTasks);
}

/** The SDK would quietly change either number to fit the other; the configuration says so instead. */
export function workflowCacheFitsTaskSlots(
  values: Pick<
    SettingValues<typeof processSettings>,
    'WORKER_MAX_CACHED_WORKFLOWS' | 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS'
  >,
): number {
  const tasks = values.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS;
  const cached =
    values.WORKER_MAX_CACHED_WORKFLOWS ??
    defaultMaxCachedWorkflows(getHeapStatistics().heap_size_limit / 2 ** 20, tasks);
  if (cached !== 0 && tasks < 2) {
    throw new ConfigError(
      'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
      'must be at least 2 while workflows are cached (WORKER_MAX_CACHED_WORKFLOWS is not 0)',
    );
  }
  if (cached !== 0 && cached < tasks) {
    throw new ConfigError(
      'WORKER_MAX_CACHED_WORKFLOWS',
      `must be 0 or at least WORKER_MAX_CONCURRENT_WORKFLOW_TASKS (${tasks}), got ${cached}`,
    );
  }
  return cached;
}

/**
 * A create must answer before the REST request timeout turns it into a 503 for a booking that goes on to exist;
 * by default it keeps a fifth of the timeout for the work before and after the wait.
 */
export function createAnswerBeforeRequestTimeout(
  createAnswerTimeoutMs: number | undefined,
  requestTimeoutMs: number,
): number {
  const value = createAnswerTimeoutMs ?? Math.floor(requestTimeoutMs * 0.8);
  if (value >= requestTimeoutMs) {
    throw new ConfigError(
      'BOOKING_CREATE_ANSWER_TIMEOUT_MS',
      `must be below HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${value}`,
    );
  }
  return value;
}

/** Files that only work together: all of `files` or none; the first missing one is named. */
export function allOrNone<Variable extends string>(
  files: Record<Variable, string | undefined>,
): Record<Variable, string> | undefined {
  const variables = Object.keys(files) as Variable[];
  const given = variables.filter((variable) => files[variable] !== undefined);
  if (given.length === 0) return undefined;
  const missing = variables.find((variable) => files[variable] === undefined);
  if (missing !== undefined) {
    throw new ConfigError(missing, `is required when any of ${variables.join(', ')} is set`);
  }
  return files as Record<Variable, string>;
}

export function httpTls(
  values: SettingValues<typeof restSettings>,
): { certificateFile: string; keyFile: string } | undefined {
  const files = allOrNone({ HTTP_TLS_CERT: values.HTTP_TLS_CERT, HTTP_TLS_KEY: values.HTTP_TLS_KEY });
  return files && { certificateFile: files.HTTP_TLS_CERT, keyFile: files.HTTP_TLS_KEY };
}

export function grpcTls(
  values: SettingValues<typeof grpcSettings>,
): { caFile: string; certificateFile: string; keyFile: string } | undefined {
  const files = allOrNone({
    GRPC_TLS_CA: values.GRPC_TLS_CA,
    GRPC_TLS_CERT: values.GRPC_TLS_CERT,
    GRPC_TLS_KEY: values.GRPC_TLS_KEY,
  });
  return (
    files && { caFile: files.GRPC_TLS_CA, certificateFile: files.GRPC_TLS_CERT, keyFile: files.GRPC_TLS_KEY }
  );
}

/** The settings an external issuer brings and the embedded identity provider cannot honour. */
export function identityProviderAgrees(
  values: SettingValues<typeof identitySettings>,
  environment: Environment,
): void {
  const external = values.OIDC_ISSUER !== undefined;
  if (values.OIDC_JWKS_URL !== undefined && !external) {
    throw new ConfigError(
      'OIDC_JWKS_URL',
      'needs OIDC_ISSUER: the embedded identity provider publishes its own keys',
    );
  }
  if (values.OIDC_ALGORITHMS.length === 0) {
    throw new ConfigError('OIDC_ALGORITHMS', 'must list at least one algorithm, e.g. RS256');
  }
  if (!external && !values.OIDC_ALGORITHMS.includes('RS256')) {
    throw new ConfigError(
      'OIDC_ALGORITHMS',
      'must include RS256, which the embedded identity provider signs with',
    );
  }
  if (!external && environment.OIDC_SCOPES_CLAIM?.trim()) {
    throw new ConfigError(
      'OIDC_SCOPES_CLAIM',
      'needs OIDC_ISSUER: the embedded identity provider writes its scopes in scope',
    );
  }
  if (values.OIDC_SCOPES_CLAIM.length === 0) {
    throw new ConfigError('OIDC_SCOPES_CLAIM', 'must name at least one claim, e.g. scope,scp');
  }
}

export function smsProviderForExternalTransport(values: SettingValues<typeof notificationSettings>): void {
  if (values.NOTIFICATIONS_TRANSPORT !== 'smtp+http') return;
  if (values.SMS_PROVIDER_URL === undefined) {
    throw new ConfigError('SMS_PROVIDER_URL', 'is required when NOTIFICATIONS_TRANSPORT is smtp+http');
  }
  if (values.SMS_PROVIDER_API_KEY === undefined) {
    throw new ConfigError('SMS_PROVIDER_API_KEY', 'is required when NOTIFICATIONS_TRANSPORT is smtp+http');
  }
}

/** The processor the worker uses, checked without ever quoting a key: a key's value must never reach a log line. */
export function paymentGateway(
  values: SettingValues<typeof paymentSettings>,
):
  | { gateway: 'simulator'; webhookSecret?: string }
  | { gateway: 'stripe'; stripe: { secretKey: string; apiUrl?: string; webhookSecret: string } } {
  const webhookSecret = values.STRIPE_WEBHOOK_SECRET;
  if (webhookSecret !== undefined && !/^whsec_[A-Za-z0-9+/=]+$/.test(webhookSecret)) {
    throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'must be a Stripe webhook signing secret, whsec_…');
  }
  // Beside the simulator, Stripe's test events can still be received (a demo, the tests) when a secret is set.
  if (values.PAYMENT_GATEWAY === 'simulator') {
    return { gateway: 'simulator', ...(webhookSecret !== undefined ? { webhookSecret } : {}) };
  }
  const secretKey = values.STRIPE_SECRET_KEY;
  if (secretKey === undefined) {
    throw new ConfigError('STRIPE_SECRET_KEY', 'is required when PAYMENT_GATEWAY is stripe');
  }
  if (!/^sk_(test|live)_[A-Za-z0-9]+$/.test(secretKey)) {
    throw new ConfigError('STRIPE_SECRET_KEY', 'must be a Stripe secret key, sk_test_… or sk_live_…');
  }
  // Without it the processor's outcomes (a finished 3-D Secure challenge, a failed refund) are never heard.
  if (webhookSecret === undefined) {
    throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'is required when PAYMENT_GATEWAY is stripe');
  }
  const apiUrl = values.STRIPE_API_URL;
  if (apiUrl !== undefined && !secretKey.startsWith('sk_test_')) {
    throw new ConfigError(
      'STRIPE_API_URL',
      "is for test servers and takes an sk_test_ key only: a live key goes to Stripe's own API",
    );
  }
  return {
    gateway: 'stripe',
    stripe: {
      secretKey,
      ...(apiUrl !== undefined ? { apiUrl } : {}),
      webhookSecret,
    },
  };
}

const temporalTlsVariables = [
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
] as const;

/**
 * Every Temporal connection security variable set to nothing: for the processes an embedded stack points at its own
 * plaintext dev server, whatever TLS settings or API key the developer's shell holds for another cluster.
 */
export const plaintextTemporalEnvironment: Readonly<Record<string, string>> = Object.fromEntries(
  ['TEMPORAL_TLS', 'TEMPORAL_API_KEY', ...temporalTlsVariables].map((variable) => [variable, '']),
);

function pemSource(source: ConfigDataSource | undefined, variablePrefix: string): PemSource | undefined {
  if (source === undefined) return undefined;
  if ('path' in source) return { variable: `${variablePrefix}_PATH`, path: source.path };
  const data = typeof source.data === 'string' ? source.data : Buffer.from(source.data).toString('utf8');
  return { variable: `${variablePrefix}_DATA`, data };
}

/**
 * The connection as Temporal's environment configuration reads it (a variable set to nothing counts as unset). TLS
 * is on when TEMPORAL_TLS says so or, as with the `temporal` CLI, when any TLS setting or an API key is given;
 * TEMPORAL_TLS=false beside one of them is a contradiction, never a quiet plaintext connection.
 */
export function temporalConnection(environment: Environment): TemporalConfig {
  const temporalVariables = Object.fromEntries(
    Object.entries(environment).flatMap(([variable, value]) =>
      variable.startsWith('TEMPORAL_') && value?.trim() ? [[variable, value.trim()]] : [],
    ),
  );
  const tlsSwitch = temporalVariables.TEMPORAL_TLS?.toLowerCase();
  if (tlsSwitch !== undefined && !['true', '1', 'false', '0'].includes(tlsSwitch)) {
    throw new ConfigError('TEMPORAL_TLS', `must be true or false, got "${temporalVariables.TEMPORAL_TLS}"`);
  }
  for (const pem of ['TEMPORAL_TLS_SERVER_CA_CERT', 'TEMPORAL_TLS_CLIENT_CERT', 'TEMPORAL_TLS_CLIENT_KEY']) {
    if (temporalVariables[`${pem}_PATH`] && temporalVariables[`${pem}_DATA`]) {
      throw new ConfigError(`${pem}_DATA`, `cannot be set beside ${pem}_PATH: give the PEM one way`);
    }
  }
  if (['true', '1'].includes(temporalVariables.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION?.toLowerCase() ?? '')) {
    throw new ConfigError(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
      "is not supported: the frontend's certificate is always checked (TEMPORAL_TLS_SERVER_NAME names another host)",
    );
  }
  // The environment is the one source: Temporal's configuration file and its profiles are not read.
  const profile = loadClientConfigProfile({ disableFile: true, overrideEnvVars: temporalVariables });
  const address = profile.address ?? '127.0.0.1:7233';
  const namespace = profile.namespace ?? 'default';
  const given = [...temporalTlsVariables, 'TEMPORAL_API_KEY'].filter(
    (variable) => temporalVariables[variable],
  );
  if (profile.tls?.disabled === true && given.length > 0) {
    const variable = given.includes('TEMPORAL_API_KEY') ? 'TEMPORAL_API_KEY' : given[0];
    throw new ConfigError(
      variable,
      variable === 'TEMPORAL_API_KEY'
        ? 'is sent only over TLS, but TEMPORAL_TLS is false'
        : 'needs TLS, but TEMPORAL_TLS is false (leave TEMPORAL_TLS unset or true)',
    );
  }
  const apiKey = profile.apiKey;
  // Checked without quoting it: the key must never reach a log line.
  if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new ConfigError('TEMPORAL_API_KEY', 'must be printable ASCII without spaces');
  }
  const tlsOn = profile.tls?.disabled === false || given.length > 0;
  if (!tlsOn) return { address, namespace };
  const certificate = pemSource(profile.tls?.clientCert, 'TEMPORAL_TLS_CLIENT_CERT');
  const privateKey = pemSource(profile.tls?.clientKey, 'TEMPORAL_TLS_CLIENT_KEY');
  if (certificate !== undefined && privateKey === undefined) {
    throw new ConfigError(
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      'is required when TEMPORAL_TLS_CLIENT_CERT_PATH is set (mutual TLS)',
    );
  }
  if (privateKey !== undefined && certificate === undefined) {
    throw new ConfigError(
      'TEMPORAL_TLS_CLIENT_CERT_PATH',
      'is required when TEMPORAL_TLS_CLIENT_KEY_PATH is set (mutual TLS)',
    );
  }
  const serverName = profile.tls?.serverName;
  if (serverName !== undefined && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(serverName)) {
    throw new ConfigError('TEMPORAL_TLS_SERVER_NAME', `must be a host name, got "${serverName}"`);
  }
  const serverCa = pemSource(profile.tls?.serverCACert, 'TEMPORAL_TLS_SERVER_CA_CERT');
  return {
    address,
    namespace,
    tls: {
      ...(serverCa !== undefined ? { serverCa } : {}),
      ...(certificate !== undefined && privateKey !== undefined
        ? { clientCertificate: { certificate, privateKey } }
        : {}),
      ...(serverName !== undefined ? { serverName } : {}),
    },
    ...(apiKey !== undefined ? { apiKey } : {}),
  };
}
