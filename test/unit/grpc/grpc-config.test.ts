// Unit tests: the gRPC configuration variables, and the server settings that refuse an incomplete mutual TLS setup.
import { grpcServerSettingsFromConfig } from '../../../src/api/grpc/server';
import { ConfigError, loadConfig } from '../../../src/config';

const required = {
  DATABASE_URL: 'postgres://user:password@127.0.0.1:5432/bookings',
  ENCRYPTION_KEYS: 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
};

function variableOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    if (error instanceof ConfigError) return error.variable;
    throw error;
  }
  return undefined;
}

describe('gRPC configuration', () => {
  it('defaults to mutual TLS with a 64 KiB receive limit and no plaintext', () => {
    const { grpc } = loadConfig(required);
    expect(grpc).toMatchObject({
      port: 50051,
      insecure: false,
      allowedClients: [],
      maxReceiveMessageBytes: 65536,
      maxSendMessageBytes: 4194304,
      keepaliveTimeMs: 60000,
      keepaliveTimeoutMs: 20000,
      shutdownGraceMs: 10000,
    });
    expect(grpc.tls).toBeUndefined();
  });

  it('reads the TLS files, the allow-list and the limits', () => {
    const { grpc } = loadConfig({
      ...required,
      GRPC_TLS_CA: '/certs/ca.crt',
      GRPC_TLS_CERT: '/certs/server.crt',
      GRPC_TLS_KEY: '/certs/server.key',
      GRPC_ALLOWED_CLIENTS: 'booking-cli, spiffe://bookings.example.com/payments',
      GRPC_MAX_RECEIVE_MESSAGE_BYTES: '131072',
    });
    expect(grpc.tls).toEqual({
      caFile: '/certs/ca.crt',
      certificateFile: '/certs/server.crt',
      keyFile: '/certs/server.key',
    });
    expect(grpc.allowedClients).toEqual(['booking-cli', 'spiffe://bookings.example.com/payments']);
    expect(grpc.maxReceiveMessageBytes).toBe(131072);
  });

  it('names the missing file when only some TLS variables are set', () => {
    expect(variableOf(() => loadConfig({ ...required, GRPC_TLS_CA: '/c', GRPC_TLS_CERT: '/s' }))).toBe(
      'GRPC_TLS_KEY',
    );
  });

  it('accepts only true or false for GRPC_INSECURE', () => {
    expect(loadConfig({ ...required, GRPC_INSECURE: 'true' }).grpc.insecure).toBe(true);
    expect(variableOf(() => loadConfig({ ...required, GRPC_INSECURE: 'yes please' }))).toBe('GRPC_INSECURE');
  });
});

describe('grpcServerSettingsFromConfig', () => {
  it('refuses to start without TLS files unless plaintext is asked for explicitly', () => {
    expect(variableOf(() => grpcServerSettingsFromConfig(loadConfig(required)))).toBe('GRPC_TLS_CA');
    const insecure = grpcServerSettingsFromConfig(loadConfig({ ...required, GRPC_INSECURE: 'true' }));
    expect(insecure.transport).toEqual({ kind: 'insecure' });
  });

  it('refuses mutual TLS with an empty allow-list', () => {
    const config = loadConfig({
      ...required,
      GRPC_TLS_CA: '/certs/ca.crt',
      GRPC_TLS_CERT: '/certs/server.crt',
      GRPC_TLS_KEY: '/certs/server.key',
    });
    expect(variableOf(() => grpcServerSettingsFromConfig(config))).toBe('GRPC_ALLOWED_CLIENTS');
  });

  it('names the variable whose file cannot be read', () => {
    const config = loadConfig({
      ...required,
      GRPC_TLS_CA: '/nonexistent/ca.crt',
      GRPC_TLS_CERT: '/nonexistent/server.crt',
      GRPC_TLS_KEY: '/nonexistent/server.key',
      GRPC_ALLOWED_CLIENTS: 'booking-cli',
    });
    expect(variableOf(() => grpcServerSettingsFromConfig(config))).toBe('GRPC_TLS_CA');
  });
});
