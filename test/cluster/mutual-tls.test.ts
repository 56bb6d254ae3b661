// The booking processes reach the cluster's Temporal frontend over mutual TLS, and a worker without a client
// certificate is refused: the real server (scripts/temporal-server.sh) with requireClientAuth on its frontend.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Connection } from '@temporalio/client';
import { projectRoot } from '../../src/project-root';
import { aliceDemoUser } from '../../dev/seed/demo-users';
import { startClusterStack, type ClusterStack } from '../../dev/stack/cluster';
import { eventually } from '../support/outcomes';
import { fetchJson, type TokenAnswer } from '../support/responses';
import { findFreePort } from '../support/ports';
import { restBookingBody } from '../support/trips';
import { clusterTestSettings } from './support/cluster-settings';

jest.setTimeout(300_000);

interface BookingAnswer {
  id: string;
  status: string;
}
interface AvailabilityAnswer {
  trips: { trip_id: string; seat_map: { seat_number: string; fare_class: string; status: string }[] }[];
}

let stack: ClusterStack;

beforeAll(async () => {
  stack = await startClusterStack({ settings: clusterTestSettings(22600, 'mutual-tls') });
});

afterAll(async () => {
  await stack?.stop();
  if (stack) fs.rmSync(stack.settings.dataDirectory, { recursive: true, force: true });
});

async function freeSeat(restUrl: string, token: string): Promise<{ tripId: string; seatNumber: string }> {
  const routes = await fetchJson<{ routes: { id: string }[] }>(restUrl, 'GET', '/v1/routes?page_size=10', {
    token,
  });
  for (const offsetDays of [1, 2, 3]) {
    const date = new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
    for (const route of routes.body.routes) {
      const availability = await fetchJson<AvailabilityAnswer>(
        restUrl,
        'GET',
        `/v1/routes/${route.id}/availability?date=${date}`,
        { token },
      );
      for (const trip of availability.body.trips) {
        // STANDARD: the create body below books that fare class.
        const seat = trip.seat_map.find(
          (entry) => entry.status === 'FREE' && entry.fare_class === 'STANDARD',
        );
        if (seat) return { tripId: trip.trip_id, seatNumber: seat.seat_number };
      }
    }
  }
  throw new Error('the demo data has no free STANDARD seat in the next three days');
}

/** The booking's status once it is `expected`; after 60 s of asking, a failure naming the last answer. */
async function statusOnceSettled(
  restUrl: string,
  token: string,
  bookingId: string,
  expected: string,
): Promise<string> {
  const answer = await eventually(
    () => fetchJson<BookingAnswer>(restUrl, 'GET', `/v1/bookings/${bookingId}`, { token }),
    (read) => read.body.status === expected,
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  return answer.body.status;
}

/** The first JSON log line of `child` whose message is `message`, or the child's exit, within `timeoutMs`. */
function firstLogLine(
  child: ReturnType<typeof spawn>,
  message: string,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(
      () => reject(new Error(`no "${message}" log line within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry.msg === message) {
          clearTimeout(timer);
          resolve(entry);
        }
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited (${code ?? signal}) before logging "${message}"`));
    });
  });
}

describe('the cluster stack over mutual TLS', () => {
  it('gives the booking processes a client certificate for a frontend that asks for one', () => {
    expect(stack.temporalTls).toBeDefined();
    expect(stack.environment).toMatchObject({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: stack.temporalTls?.certificates.certificateAuthority,
      TEMPORAL_TLS_CLIENT_CERT_PATH: stack.temporalTls?.certificates.client.certificate,
      TEMPORAL_TLS_CLIENT_KEY_PATH: stack.temporalTls?.certificates.client.privateKey,
    });
    const serverConfig = fs.readFileSync(
      path.join(stack.settings.dataDirectory, 'temporal', 'temporal.yaml'),
      'utf8',
    );
    expect(serverConfig).toContain('requireClientAuth: true');
  });

  it('runs a booking made through the API to CONFIRMED and CANCELLED on the split workers', async () => {
    const [api1, api2] = stack.restUrls;
    const login = await fetchJson<TokenAnswer>(api1, 'POST', '/api/auth/login', {
      body: { email: aliceDemoUser.email, password: aliceDemoUser.password },
    });
    expect(login.status).toBe(200);
    const token = login.body.access_token;
    const seat = await freeSeat(api1, token);

    const created = await fetchJson<BookingAnswer>(api1, 'POST', '/v1/bookings', {
      token,
      body: restBookingBody(seat, seat.seatNumber),
    });
    if (![201, 202].includes(created.status))
      throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`);
    // 202: on a cold cluster the seat hold may outlast the create's answer time; the booking goes on regardless.
    expect(await statusOnceSettled(api2, token, created.body.id, 'PENDING_PAYMENT')).toBe('PENDING_PAYMENT');

    // The other API process: both accept the same tokens and reach the same workflow.
    const paid = await fetchJson<BookingAnswer>(api2, 'POST', `/v1/bookings/${created.body.id}/payment`, {
      token,
      body: { payment_token: 'tok_visa' },
    });
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('CONFIRMED');

    const cancelled = await fetchJson<BookingAnswer>(api1, 'PUT', `/v1/bookings/${created.body.id}/cancel`, {
      token,
      body: { reason: 'cluster mutual TLS test' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
  });

  it('refuses a plaintext connection to the frontend', async () => {
    await expect(
      Connection.connect({ address: stack.temporalAddress, connectTimeout: 5000 }),
    ).rejects.toThrow();
  });

  it('refuses a worker that trusts the server but shows no client certificate', async () => {
    const environment: NodeJS.ProcessEnv = {
      ...stack.environment,
      WORKER_TASK_QUEUES: 'booking-notifications',
      WORKER_METRICS_PORT: String(await findFreePort()),
      LOG_LEVEL: 'warn',
    };
    delete environment.TEMPORAL_TLS_CLIENT_CERT_PATH;
    delete environment.TEMPORAL_TLS_CLIENT_KEY_PATH;
    const worker = spawn(process.execPath, [path.join(projectRoot, 'dist', 'src', 'worker', 'main.js')], {
      env: environment,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      // The worker's Rust core sees the server end the TLS 1.3 session once the handshake found no certificate.
      const retry = await firstLogLine(worker, 'Temporal not reachable yet, retrying', 60_000);
      expect(retry).toMatchObject({ transport: 'TLS', address: stack.temporalAddress });
      expect(retry.err).toMatchObject({
        name: 'TransportError',
        message: expect.stringContaining('Failed to call GetSystemInfo') as unknown,
      });
    } finally {
      worker.kill('SIGKILL');
    }
    // The same settings from a plain gRPC client name the reason: the TLS alert "certificate required".
    const tls = stack.temporalTls!;
    const client = new grpc.Client(
      stack.temporalAddress,
      grpc.credentials.createSsl(fs.readFileSync(tls.certificates.certificateAuthority)),
      { 'grpc.ssl_target_name_override': tls.serverName },
    );
    try {
      const failure = await new Promise<grpc.ServiceError | undefined>((resolve) =>
        client.makeUnaryRequest(
          '/grpc.health.v1.Health/Check',
          (request: Buffer) => request,
          (response: Buffer) => response,
          Buffer.alloc(0),
          { deadline: Date.now() + 15_000 },
          (error) => resolve(error ?? undefined),
        ),
      );
      expect(failure).toMatchObject({ code: grpc.status.UNAVAILABLE });
      expect(failure?.details).toMatch(/certificate required/i);
    } finally {
      client.close();
    }
  });
});
