// How every process reaches the Temporal frontend: TLS, mutual TLS and the API key, from config.temporal.
import type { TLSConfig } from '@temporalio/client';
import type { TemporalConfig } from '../config';

/** What both the client's `Connection` and the worker's `NativeConnection` take to reach the frontend. */
export interface TemporalConnectionOptions {
  address: string;
  /** Absent: plaintext. */
  tls?: TLSConfig;
  /** Sent by the SDK as `authorization: Bearer <key>` on every call. */
  apiKey?: string;
}

export function temporalConnectionOptions(
  temporal: Pick<TemporalConfig, 'address' | 'tls' | 'apiKey'>,
): TemporalConnectionOptions {
  const { tls, apiKey } = temporal;
  return {
    address: temporal.address,
    ...(tls === undefined
      ? {}
      : {
          tls: {
            ...(tls.serverCaPem !== undefined ? { serverRootCACertificate: tls.serverCaPem } : {}),
            ...(tls.clientCertificate !== undefined
              ? {
                  clientCertPair: {
                    crt: tls.clientCertificate.certificatePem,
                    key: tls.clientCertificate.privateKey,
                  },
                }
              : {}),
            // Unset, both SDKs check the certificate against the address's host (and send it as SNI unless an IP).
            ...(tls.serverName !== undefined ? { serverNameOverride: tls.serverName } : {}),
          },
        }),
    ...(apiKey !== undefined ? { apiKey } : {}),
  };
}

/** What a log line may say about the connection: how it is secured, never a key. */
export function describeTemporalConnection(temporal: TemporalConfig): {
  address: string;
  transport: 'plaintext' | 'TLS' | 'mutual TLS';
  serverName?: string;
  apiKey: boolean;
} {
  const { tls } = temporal;
  return {
    address: temporal.address,
    transport: tls === undefined ? 'plaintext' : tls.clientCertificate !== undefined ? 'mutual TLS' : 'TLS',
    ...(tls?.serverName !== undefined ? { serverName: tls.serverName } : {}),
    apiKey: temporal.apiKey !== undefined,
  };
}
