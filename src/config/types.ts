// The configuration's named value types and the Temporal connection rules.ts makes (the rest is inferred: load.ts).
import type { logFormats, logLevels, tokenAlgorithms } from './schema';

export type LogLevel = (typeof logLevels)[number];
export type LogFormat = (typeof logFormats)[number];
export type TokenAlgorithm = (typeof tokenAlgorithms)[number];

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
