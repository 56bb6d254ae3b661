// Development certificates for gRPC mutual TLS, made once with the openssl CLI: a CA, a server and a client.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Paths of a PEM certificate and its unencrypted PEM private key. */
export interface CertificateFiles {
  readonly certificate: string;
  readonly privateKey: string;
}

export interface CertificateRequest {
  /** File name stem: `<name>.crt` and `<name>.key`. */
  readonly name: string;
  readonly commonName: string;
  /**
   * `server` gets EKU serverAuth, `client` gets EKU clientAuth; `server-and-client` both, for a server whose
   * services also call each other with the same certificate (Temporal's internode TLS).
   */
  readonly usage: 'server' | 'client' | 'server-and-client';
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly uris?: readonly string[];
  readonly validDays?: number;
}

export interface DevelopmentCertificates {
  readonly directory: string;
  readonly certificateAuthority: string;
  readonly server: CertificateFiles;
  readonly client: CertificateFiles;
  /** The client certificate's CN, to put in GRPC_ALLOWED_CLIENTS. */
  readonly clientIdentity: string;
}

export const developmentClientIdentity = 'booking-cli';

const certificateAuthorityDays = 3650;
// Browsers and TLS stacks refuse leaf certificates valid for longer than 825 days.
const leafCertificateDays = 825;
const renewalMarginMs = 30 * 24 * 3600 * 1000;

function openssl(args: readonly string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'openssl was not found on PATH: install OpenSSL 3, or set GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY',
      );
    }
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`openssl ${args[0]} failed${stderr ? `: ${stderr}` : ''}`, { cause: error });
  }
}

function filesFor(directory: string, name: string): CertificateFiles {
  return {
    certificate: path.join(directory, `${name}.crt`),
    privateKey: path.join(directory, `${name}.key`),
  };
}

const extendedKeyUsages: Record<CertificateRequest['usage'], string> = {
  server: 'serverAuth',
  client: 'clientAuth',
  'server-and-client': 'serverAuth,clientAuth',
};

const newKeyArguments = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-noenc'];

/** A self-signed CA that may sign certificates and nothing else. */
export function createCertificateAuthority(
  directory: string,
  options: { name: string; commonName: string },
): CertificateFiles {
  fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  const files = filesFor(directory, options.name);
  openssl([
    'req',
    '-x509',
    ...newKeyArguments,
    '-keyout',
    files.privateKey,
    '-out',
    files.certificate,
    '-days',
    String(certificateAuthorityDays),
    '-subj',
    `/CN=${options.commonName}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE,pathlen:0',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  fs.chmodSync(files.privateKey, 0o600);
  return files;
}

/** A leaf certificate signed by `authority`, with a fresh key. */
export function issueCertificate(
  authority: CertificateFiles,
  directory: string,
  request: CertificateRequest,
): CertificateFiles {
  fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  const files = filesFor(directory, request.name);
  const alternativeNames = [
    ...(request.dnsNames ?? []).map((name) => `DNS:${name}`),
    ...(request.ipAddresses ?? []).map((address) => `IP:${address}`),
    ...(request.uris ?? []).map((uri) => `URI:${uri}`),
  ];
  openssl([
    'req',
    '-x509',
    ...newKeyArguments,
    '-keyout',
    files.privateKey,
    '-out',
    files.certificate,
    '-CA',
    authority.certificate,
    '-CAkey',
    authority.privateKey,
    '-days',
    String(request.validDays ?? leafCertificateDays),
    '-subj',
    `/CN=${request.commonName}`,
    '-addext',
    'basicConstraints=critical,CA:FALSE',
    '-addext',
    'keyUsage=critical,digitalSignature',
    '-addext',
    `extendedKeyUsage=${extendedKeyUsages[request.usage]}`,
    ...(alternativeNames.length > 0 ? ['-addext', `subjectAltName=${alternativeNames.join(',')}`] : []),
  ]);
  fs.chmodSync(files.privateKey, 0o600);
  return files;
}

function usable(files: readonly string[], certificates: readonly string[]): boolean {
  if (!files.every((file) => fs.existsSync(file))) return false;
  return certificates.every((file) => {
    const validTo = Date.parse(new crypto.X509Certificate(fs.readFileSync(file)).validTo);
    return validTo - Date.now() > renewalMarginMs;
  });
}

/**
 * The embedded stack's certificates under `<dataDirectory>/certs`: reused while present and valid for another
 * 30 days, otherwise all made afresh (a new CA invalidates every certificate the old one signed).
 */
export function loadOrCreateDevelopmentCertificates(dataDirectory: string): DevelopmentCertificates {
  const directory = path.join(dataDirectory, 'certs');
  const authority = filesFor(directory, 'ca');
  const server = filesFor(directory, 'server');
  const client = filesFor(directory, 'client');
  const all = [authority, server, client];
  const present = usable(
    all.flatMap((files) => [files.certificate, files.privateKey]),
    all.map((files) => files.certificate),
  );
  if (!present) {
    createCertificateAuthority(directory, { name: 'ca', commonName: 'Bus Booking Development CA' });
    issueCertificate(authority, directory, {
      name: 'server',
      commonName: 'localhost',
      usage: 'server',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
    });
    issueCertificate(authority, directory, {
      name: 'client',
      commonName: developmentClientIdentity,
      usage: 'client',
    });
  }
  return {
    directory,
    certificateAuthority: authority.certificate,
    server,
    client,
    clientIdentity: developmentClientIdentity,
  };
}
