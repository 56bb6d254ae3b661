// The Temporal connection settings reach the wire: a loopback TLS frontend sees the client certificate, the API key,
// the server name, and the API and worker processes connecting with them; a server certificate from another CA is
// refused.
import { spawn, type ChildProcess } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import fs from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../../src/config';
import { temporalConnectionOptions } from '../../../src/security/temporal-connection';
import {
  createCertificateAuthority,
  issueCertificate,
  type CertificateFiles,
} from '../../../dev/stack/development-certificates';
import { testDatabaseUrl, testSecrets } from '../../support/database';
import { eventually } from '../../support/outcomes';

const projectRoot = path.resolve(__dirname, '../../..');
const apiKey = 'tmprl-integration-api-key.0123456789';
const frontendName = 'frontend.temporal.internal';
const systemInfoMethod = '/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo';

/** One gRPC call as the frontend received it, with what the TLS handshake told about the caller. */
interface ReceivedCall {
  method: string;
  authorization: string | undefined;
  clientCommonName: string | undefined;
  clientCertificateVerified: boolean;
  serverName: string | false | null;
}

const ignoreVanishedClient = () => undefined;

/**
 * A Temporal frontend stand-in over HTTP/2 and TLS that asks for a client certificate (without requiring one, so
 * it can report its absence); it answers GetSystemInfo, which both SDKs call to connect, and nothing else.
 */
async function startRecordingFrontend(options: {
  host: string;
  server: CertificateFiles;
  clientAuthority: string;
}) {
  const calls: ReceivedCall[] = [];
  const server = http2.createSecureServer({
    key: fs.readFileSync(options.server.privateKey),
    cert: fs.readFileSync(options.server.certificate),
    ca: fs.readFileSync(options.clientAuthority),
    requestCert: true,
    rejectUnauthorized: false,
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', ignoreVanishedClient);
    const socket = stream.session?.socket as TLSSocket;
    const peer = socket.getPeerCertificate();
    const commonName = peer.subject?.CN;
    calls.push({
      method: String(headers[':path']),
      authorization: headers.authorization,
      clientCommonName: Array.isArray(commonName) ? commonName[0] : commonName,
      clientCertificateVerified: socket.authorized,
      serverName: socket.servername,
    });
    stream.resume();
    if (headers[':path'] === systemInfoMethod) {
      // GetSystemInfoResponse with no fields (an old server's answer): a gRPC frame of an empty message.
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.alloc(5));
    } else {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '12',
          'grpc-message': 'stand-in',
        },
        { endStream: true },
      );
    }
  });
  // The entry points are stopped with SIGKILL, and a client may drop a connection at any point; its ECONNRESET
  // would reach no listener, and the test runner would take it for a failure of the suite itself.
  server.on('secureConnection', (socket: TLSSocket) => socket.on('error', ignoreVanishedClient));
  // Handshakes the client broke off, by the TLS alert it sent (a plaintext client sends none).
  const refusedHandshakes: string[] = [];
  server.on('tlsClientError', (error: Error) => refusedHandshakes.push(error.message));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, options.host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    calls,
    refusedHandshakes,
    async stop() {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Frontend = Awaited<ReturnType<typeof startRecordingFrontend>>;

let directory: string;
let authority: CertificateFiles;
let otherAuthority: CertificateFiles;
let workerCertificate: CertificateFiles;
let frontend: Frontend;
let localhostAddress: string;

beforeAll(async () => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
  authority = createCertificateAuthority(directory, { name: 'ca', commonName: 'Temporal Test CA' });
  otherAuthority = createCertificateAuthority(directory, { name: 'other-ca', commonName: 'Another CA' });
  const serverCertificate = issueCertificate(authority, directory, {
    name: 'frontend',
    commonName: frontendName,
    usage: 'server',
    dnsNames: [frontendName, 'localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
  });
  workerCertificate = issueCertificate(authority, directory, {
    name: 'bookings-worker',
    commonName: 'bookings-worker',
    usage: 'client',
  });
  // `localhost` as both SDKs resolve it first, so a connection to `localhost:<port>` reaches this listener.
  localhostAddress = (await lookup('localhost')).address;
  frontend = await startRecordingFrontend({
    host: localhostAddress,
    server: serverCertificate,
    clientAuthority: authority.certificate,
  });
});

afterAll(async () => {
  await frontend?.stop();
  fs.rmSync(directory, { recursive: true, force: true });
});

beforeEach(() => {
  frontend.calls.length = 0;
  frontend.refusedHandshakes.length = 0;
});

function connectionOptions(environment: Record<string, string>) {
  return temporalConnectionOptions(
    loadConfig({ DATABASE_URL: testDatabaseUrl(), GRPC_INSECURE: 'true', ...testSecrets, ...environment })
      .temporal,
  );
}

function mutualTlsEnvironment(address: string): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: authority.certificate,
    TEMPORAL_TLS_CLIENT_CERT_PATH: workerCertificate.certificate,
    TEMPORAL_TLS_CLIENT_KEY_PATH: workerCertificate.privateKey,
    TEMPORAL_API_KEY: apiKey,
  };
}

/** Connects once with each SDK's connection (the API's client and the worker's native one); the outcome is not the point. */
const clients = {
  'client Connection (API)': async (options: ReturnType<typeof connectionOptions>) => {
    const connection = await Connection.connect({ ...options, connectTimeout: 5000 });
    await connection.close();
  },
  'worker NativeConnection': async (options: ReturnType<typeof connectionOptions>) => {
    const connection = await NativeConnection.connect(options);
    await connection.close();
  },
};

describe.each(Object.entries(clients))('Temporal over TLS with the %s', (_name, connect) => {
  it('presents the client certificate and the API key, checking the server against TEMPORAL_TLS_SERVER_CA_CERT_PATH', async () => {
    await connect(connectionOptions(mutualTlsEnvironment(`localhost:${frontend.port}`)));
    expect(frontend.calls.length).toBeGreaterThan(0);
    expect(frontend.calls[0]).toEqual({
      method: systemInfoMethod,
      authorization: `Bearer ${apiKey}`,
      clientCommonName: 'bookings-worker',
      clientCertificateVerified: true,
      // The default server name: the host of TEMPORAL_ADDRESS.
      serverName: 'localhost',
    });
  });

  it('sends TEMPORAL_TLS_SERVER_NAME and checks the certificate against it', async () => {
    await connect(
      connectionOptions({
        TEMPORAL_ADDRESS: `${localhostAddress.includes(':') ? `[${localhostAddress}]` : localhostAddress}:${frontend.port}`,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: authority.certificate,
        TEMPORAL_TLS_SERVER_NAME: frontendName,
      }),
    );
    expect(frontend.calls[0]).toMatchObject({
      serverName: frontendName,
      clientCommonName: undefined,
      clientCertificateVerified: false,
      authorization: undefined,
    });
  });

  it('refuses a frontend whose certificate does not chain to TEMPORAL_TLS_SERVER_CA_CERT_PATH', async () => {
    await expect(
      connect(
        connectionOptions({
          TEMPORAL_ADDRESS: `localhost:${frontend.port}`,
          TEMPORAL_TLS_SERVER_CA_CERT_PATH: otherAuthority.certificate,
          TEMPORAL_API_KEY: apiKey,
        }),
      ),
    ).rejects.toThrow();
    // No call got through, so the API key never left the client.
    expect(frontend.calls).toEqual([]);
    // It did speak TLS and broke the handshake off (Node's TLS closes the socket, rustls sends an alert).
    expect(frontend.refusedHandshakes.length).toBeGreaterThan(0);
    for (const refusal of frontend.refusedHandshakes)
      expect(refusal).toMatch(/alert unknown ca|socket hang up/);
  });
});

/** Starts an entry point from source with the given variables; stopped by the test once the frontend heard from it. */
function startEntryPoint(name: 'api' | 'worker', environment: Record<string, string>) {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(projectRoot, 'src', name, 'main.ts')],
    {
      cwd: projectRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: testDatabaseUrl(),
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        ...testSecrets,
        ...environment,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let errorOutput = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errorOutput += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    errorOutput: () => errorOutput,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('the API and worker processes', () => {
  it.each([
    ['worker', { WORKER_METRICS_PORT: '0', WORKER_TASK_QUEUES: 'booking-notifications' }, systemInfoMethod],
    [
      'api',
      {
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: '0',
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: '0',
        GRPC_INSECURE: 'true',
        METRICS_PORT: '0',
        GRPC_HEALTH_CHECK_INTERVAL_MS: '100',
      },
      // The API's client connects lazily: its first call is the readiness check of the Temporal frontend.
      '/grpc.health.v1.Health/Check',
    ],
  ] as const)(
    'the %s process reaches the frontend over mutual TLS with the API key',
    async (name, ports, firstMethod) => {
      const child = startEntryPoint(name, {
        ...mutualTlsEnvironment(`localhost:${frontend.port}`),
        ...ports,
      });
      try {
        const calls = await eventually(
          () => Promise.resolve(frontend.calls),
          (received) => received.some((call) => call.method === firstMethod),
          { timeoutMs: 60_000, intervalMs: 100 },
        ).catch((error: unknown) => {
          throw new Error(`${name} never called ${firstMethod}: ${child.errorOutput()}`, { cause: error });
        });
        expect(calls.find((call) => call.method === firstMethod)).toEqual({
          method: firstMethod,
          authorization: `Bearer ${apiKey}`,
          clientCommonName: 'bookings-worker',
          clientCertificateVerified: true,
          serverName: 'localhost',
        });
      } finally {
        await child.stop();
      }
    },
  );
});
