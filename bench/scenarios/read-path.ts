// The read path under 50 connections: GET /v1/routes and a trip availability, each against a bare Koa handler
// answering the same bytes.
import { httpLoad, warmUp, type HttpLoadRequest } from '../lib/http-load';
import {
  alternate,
  figuresOf,
  formatNumber,
  type BenchContext,
  type ScenarioResult,
} from '../lib/measurement';
import { median } from '../lib/statistics';

const requiredRatio = 0.25;
const goalRatio = 0.5;
const requiredP99Ms = 20;

/** Cycles through a list, one item per call. */
function rotating<T>(items: readonly T[]): () => T {
  let index = 0;
  return () => {
    const item = items[index % items.length];
    index += 1;
    return item;
  };
}

/** The service's answer to one request: the bare handler answers exactly these bytes. */
async function sampleBody(context: BenchContext, path: string): Promise<string> {
  const response = await fetch(`${context.stack.apiUrl}${path}`, {
    headers: { authorization: `Bearer ${context.accounts[0].token}` },
  });
  const body = await response.text();
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${body.slice(0, 300)}`);
  return body;
}

export function availabilityPaths(context: BenchContext): string[] {
  return context.stack.inventory.availabilityTargets.map(
    (target) => `/v1/routes/${target.routeId}/availability?date=${target.date}`,
  );
}

export async function bareBodies(context: BenchContext): Promise<Record<string, string>> {
  return {
    '/routes': await sampleBody(context, '/v1/routes'),
    '/availability': await sampleBody(context, availabilityPaths(context)[0]),
  };
}

async function readScenario(
  context: BenchContext,
  id: string,
  title: string,
  servicePaths: readonly string[],
  barePath: string,
): Promise<ScenarioResult> {
  const { stack, options } = context;
  const bareUrl = stack.bareKoa!.url;
  const nextToken = rotating(context.accounts.map((account) => account.token));
  const nextPath = rotating(servicePaths);
  const serviceRequest = (): HttpLoadRequest => ({
    method: 'GET',
    path: nextPath(),
    headers: { authorization: `Bearer ${nextToken()}` },
  });
  const bareRequest = (): HttpLoadRequest => ({
    method: 'GET',
    path: barePath,
    headers: { authorization: `Bearer ${nextToken()}` },
  });
  const load = { connections: options.connections, durationSeconds: options.durationSeconds };
  await warmUp(
    { url: stack.apiUrl, connections: options.connections, nextRequest: serviceRequest },
    { seconds: options.warmUpSeconds, distinctRequests: servicePaths.length },
  );
  await warmUp(
    { url: bareUrl, connections: options.connections, nextRequest: bareRequest },
    { seconds: options.warmUpSeconds },
  );
  const runs = await alternate(context, {
    service: () => httpLoad({ ...load, url: stack.apiUrl, nextRequest: serviceRequest }),
    baseline: () => httpLoad({ ...load, url: bareUrl, nextRequest: bareRequest }),
  });
  const serviceRate = median(figuresOf(runs, 'service', 'requestsPerSecond'));
  const serviceP99 = median(figuresOf(runs, 'service', 'p99Ms'));
  const baselineRate = median(figuresOf(runs, 'baseline', 'requestsPerSecond'));
  const baselineP99 = median(figuresOf(runs, 'baseline', 'p99Ms'));
  const failures = [...figuresOf(runs, 'service', 'non2xx'), ...figuresOf(runs, 'service', 'errors')].reduce(
    (sum, value) => sum + value,
    0,
  );
  const ratio = serviceRate / baselineRate;
  return {
    id,
    title,
    service: `${formatNumber(serviceRate)} req/s, p99 ${formatNumber(serviceP99)} ms${failures > 0 ? `, ${failures} failed` : ''}`,
    baseline: `bare Koa ${formatNumber(baselineRate)} req/s, p99 ${formatNumber(baselineP99)} ms`,
    ratio,
    ratioText: ratio.toFixed(3),
    required: `≥ ${requiredRatio}, p99 ≤ ${requiredP99Ms} ms`,
    goal: `${goalRatio}`,
    met: ratio >= requiredRatio && serviceP99 <= requiredP99Ms && failures === 0,
    runs,
  };
}

export function routesScenario(context: BenchContext): Promise<ScenarioResult> {
  return readScenario(
    context,
    'routes',
    `GET /v1/routes with a JWT, ${context.options.connections} connections`,
    ['/v1/routes'],
    '/routes',
  );
}

export function availabilityScenario(context: BenchContext): Promise<ScenarioResult> {
  const { inventory } = context.stack;
  return readScenario(
    context,
    'availability',
    `trip availability, ${context.options.connections} connections, ${inventory.trips.toLocaleString('en-US')} trips × ${inventory.seatsPerTrip} seats`,
    availabilityPaths(context),
    '/availability',
  );
}
