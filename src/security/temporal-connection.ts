// How every process reaches the Temporal frontend: TLS, mutual TLS and the API key, from config.temporal.
import type { TLSConfig } from '@temporalio/client';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { ConfigError, readSettingFile, type PemSource, type TemporalConfig } from '../config';

function pemBytes(source: PemSource): Buffer {
  return 'data' in source ? Buffer.from(source.data, 'utf8') : readSettingFile(source.variable, source.path);
}

const where = (source: PemSource) => ('path' in source ? `: ${source.path}` : '');

/** Every certificate of a PEM (a CA bundle, or a client certificate followed by its intermediates); the first is the leaf. */
function pemCertificates(source: PemSource): { pem: Buffer; leaf: X509Certificate } {
  const pem = pemBytes(source);
  const blocks =
    pem.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new ConfigError(source.variable, `is not a PEM certificate${where(source)}`);
  const certificates = blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new ConfigError(source.variable, `holds a PEM certificate that cannot be parsed${where(source)}`);
    }
  });
  return { pem, leaf: certificates[0] };
}

function clientCertificatePair(pair: NonNullable<NonNullable<TemporalConfig['tls']>['clientCertificate']>): {
  crt: Buffer;
  key: Buffer;
} {
  const certificate = pemCertificates(pair.certificate);
  const key = pemBytes(pair.privateKey);
  let privateKey;
  try {
    privateKey = createPrivateKey({ key, format: 'pem' });
  } catch {
    // The parser's own message is left out: it may quote the key.
    throw new ConfigError(
      pair.privateKey.variable,
      `is not an unencrypted PEM private key${where(pair.privateKey)}`,
    );
  }
  if (!certificate.leaf.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      pair.privateKey.variable,
      `is not the private key of the certificate in ${pair.certificate.variable}`,
    );
  }
  return { crt: certificate.pem, key };
}

/** What both the client's `Connection` and the worker's `NativeConnection` take to reach the frontend. */
export interface TemporalConnectionOptions {
  address: string;
  /** Absent: plaintext. */
  tls?: TLSConfig;
  /** Sent by the SDK as `authorization: Bearer <key>` on every call. */
  apiKey?: string;
}

/** Reads and checks the PEM files the configuration names: call at start, so a bad file stops the process there. */
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
            ...(tls.serverCa !== undefined
              ? { serverRootCACertificate: pemCertificates(tls.serverCa).pem }
              : {}),
            ...(tls.clientCertificate !== undefined
              ? { clientCertPair: clientCertificatePair(tls.clientCertificate) }
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
