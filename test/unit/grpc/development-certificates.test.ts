// Unit tests: the embedded stack's gRPC certificates are made once, chain to their CA and carry the right usages.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadOrCreateDevelopmentCertificates } from '../../../dev/stack/development-certificates';

const serverAuth = '1.3.6.1.5.5.7.3.1';
const clientAuth = '1.3.6.1.5.5.7.3.2';
let dataDirectory: string;

function certificate(file: string): X509Certificate {
  return new X509Certificate(fs.readFileSync(file));
}

beforeEach(() => {
  dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'bookings-dev-certs-'));
});

afterEach(() => {
  fs.rmSync(dataDirectory, { recursive: true, force: true });
});

describe('loadOrCreateDevelopmentCertificates', () => {
  it('makes a CA, a localhost server certificate and a booking-cli client certificate under certs/', () => {
    const certificates = loadOrCreateDevelopmentCertificates(dataDirectory);
    expect(certificates.directory).toBe(path.join(dataDirectory, 'certs'));
    const authority = certificate(certificates.certificateAuthority);
    const server = certificate(certificates.server.certificate);
    const client = certificate(certificates.client.certificate);

    expect(authority.ca).toBe(true);
    expect(server.verify(authority.publicKey)).toBe(true);
    expect(client.verify(authority.publicKey)).toBe(true);
    expect(server.checkHost('localhost')).toBe('localhost');
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.keyUsage).toEqual([serverAuth]);
    expect(client.keyUsage).toEqual([clientAuth]);
    expect(client.subject).toBe(`CN=${certificates.clientIdentity}`);
    expect(certificates.clientIdentity).toBe('booking-cli');
    expect(fs.statSync(certificates.server.privateKey).mode & 0o077).toBe(0);
  });

  it('reuses the certificates on the next start', () => {
    const first = loadOrCreateDevelopmentCertificates(dataDirectory);
    const fingerprint = certificate(first.server.certificate).fingerprint256;
    const second = loadOrCreateDevelopmentCertificates(dataDirectory);
    expect(certificate(second.server.certificate).fingerprint256).toBe(fingerprint);
  });

  it('makes a fresh set when a file is missing, so every certificate chains to the current CA', () => {
    const first = loadOrCreateDevelopmentCertificates(dataDirectory);
    const oldAuthority = certificate(first.certificateAuthority).fingerprint256;
    fs.rmSync(first.client.privateKey);
    const second = loadOrCreateDevelopmentCertificates(dataDirectory);
    const authority = certificate(second.certificateAuthority);
    expect(authority.fingerprint256).not.toBe(oldAuthority);
    expect(certificate(second.server.certificate).verify(authority.publicKey)).toBe(true);
    expect(fs.existsSync(second.client.privateKey)).toBe(true);
  });
});
