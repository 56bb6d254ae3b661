// Login throughput over the load-test account pool, against a bare Koa handler doing one argon2 verification.
import { loadTestUsers, LOAD_TEST_PASSWORD } from '../../dev/seed';
import { httpLoad, warmUp, type HttpLoadRequest } from '../lib/http-load';
import {
  alternate,
  figuresOf,
  formatNumber,
  type BenchContext,
  type ScenarioResult,
} from '../lib/measurement';
import { median } from '../lib/statistics';

export async function loginScenario(context: BenchContext): Promise<ScenarioResult> {
  const { stack, options } = context;
  const bare = stack.bareKoa!;
  // Account after account: no one account signs in often enough to meet its throttle.
  const serviceRequests = loadTestUsers.map((user): HttpLoadRequest => ({
    method: 'POST',
    path: '/api/auth/login',
    body: JSON.stringify({ email: user.email, password: LOAD_TEST_PASSWORD }),
  }));
  const bareRequests = loadTestUsers.map((user): HttpLoadRequest => ({
    method: 'POST',
    path: '/login',
    body: JSON.stringify({ email: user.email, password: bare.loginPassword }),
  }));
  const load = { connections: options.loginConnections, durationSeconds: options.durationSeconds };
  const warmUpRun = { seconds: options.warmUpSeconds };
  await warmUp(
    { url: stack.apiUrl, connections: options.loginConnections, requests: serviceRequests },
    warmUpRun,
  );
  await warmUp({ url: bare.url, connections: options.loginConnections, requests: bareRequests }, warmUpRun);
  const runs = await alternate(context, {
    service: () => httpLoad({ ...load, url: stack.apiUrl, requests: serviceRequests }),
    baseline: () => httpLoad({ ...load, url: bare.url, requests: bareRequests }),
  });
  const serviceRate = median(figuresOf(runs, 'service', 'requestsPerSecond'));
  const baselineRate = median(figuresOf(runs, 'baseline', 'requestsPerSecond'));
  const failures = [...figuresOf(runs, 'service', 'non2xx'), ...figuresOf(runs, 'service', 'errors')].reduce(
    (sum, value) => sum + value,
    0,
  );
  const ratio = serviceRate / baselineRate;
  return {
    id: 'login',
    title: `POST /api/auth/login, ${options.loginConnections} connections, ${loadTestUsers.length} accounts`,
    service: `${formatNumber(serviceRate)} logins/s, p99 ${formatNumber(median(figuresOf(runs, 'service', 'p99Ms')))} ms${failures > 0 ? `, ${failures} failed` : ''}`,
    baseline: `bare Koa + argon2 verify ${formatNumber(baselineRate)}/s, p99 ${formatNumber(median(figuresOf(runs, 'baseline', 'p99Ms')))} ms`,
    ratio,
    ratioText: ratio.toFixed(2),
    required: '– (no failures)',
    goal: '–',
    met: failures === 0,
    runs,
  };
}
