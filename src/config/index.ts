// The configuration module: the settings table (schema.ts), its cross-field rules (rules.ts) and loadConfig.
export {
  loadConfig,
  loadLogFormat,
  loadTracingConfig,
  type AuthConfig,
  type Config,
  type EmbeddedIdentityProviderConfig,
  type NotificationsConfig,
  type PaymentsConfig,
  type TracingConfig,
} from './load';
export { defaultMaxCachedWorkflows, plaintextTemporalEnvironment } from './rules';
export {
  defaultTemporalUiOrigins,
  notificationTransports,
  paymentGateways,
  schemaSections,
  tokenAlgorithms,
  tracesSamplers,
} from './schema';
export { docsClientId, oauthClientKinds, type OAuthClientRegistration } from './oauth-clients';
export {
  ConfigError,
  flag,
  integer,
  port,
  readSettingFile,
  readSettings,
  text,
  type Environment,
  type Setting,
  type SettingTable,
} from './settings';
export type * from './types';
