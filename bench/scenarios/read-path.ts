// The read path under 50 connections: GET /v1/routes and a trip availability (also priced for a party of three), each
// against a bare Koa handler answering the same bytes.
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

/**
 * Each path with a token, paths and tokens each in turn: every path is asked for, and every account asks, however
 * many of either there are.
 */
function withTokens(paths: readonly string[], tokens: readonly string[]): HttpLoadRequest[] {
  return Array.from({ length: Math.max(paths.length, tokens.length) }, (_, index) => ({
    method: 'GET',
    path: paths[index % paths.length],
    headers: { authorization: `Bearer ${tokens[index % tokens.length]}` },
  }));
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

/** Every other read asks for the route's inner leg instead of the whole route: seats free on a segment's legs. */
export function availabilityPaths(context: BenchContext): string[] {
  return context.stack.inventory.availabilityTargets.map(({ routeId, date, innerSegment }, index) =>
    index % 2 === 0
      ? `/v1/routes/${routeId}/availability?date=${date}`
      : `/v1/routes/${routeId}/availability?date=${date}&boarding_stop=${innerSegment.boarding}&alighting_stop=${innerSegment.alighting}`,
  );
}

/** A party of three, two of them seated at the full fare and one child at half: what a family searches with. */
export const benchParty = 'ADULT:2,CHILD:1';

/** The availability reads, each asking for the party's prices too. */
export function partyAvailabilityPaths(context: BenchContext): string[] {
  return availabilityPaths(context).map((path) => `${path}&passengers=${benchParty}`);
}

export async function bareBodies(context: BenchContext): Promise<Record<string, string>> {
  return {
    '/routes': await sampleBody(context, '/v1/routes'),
    '/availability': await sampleBody(context, availabilityPaths(context)[0]),
    '/availability-party': await sampleBody(context, partyAvailabilityPaths(context)[0]),
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
  const tokens = context.accounts.map((account) => account.token);
  const serviceRequests = withTokens(servicePaths, tokens);
  const bareRequests = withTokens([barePath], tokens);
  const load = { connections: options.connections, durationSeconds: options.durationSeconds };
  const warmUpRun = { seconds: options.warmUpSeconds };
  await warmUp({ url: stack.apiUrl, connections: options.connections, requests: serviceRequests }, warmUpRun);
  await warmUp({ url: bareUrl, connections: options.connections, requests: bareRequests }, warmUpRun);
  const runs = await alternate(context, {
    service: () => httpLoad({ ...load, url: stack.apiUrl, requests: serviceRequests }),
    baseline: () => httpLoad({ ...load, url: bareUrl, requests: bareRequests }),
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

export function partyAvailabilityScenario(context: BenchContext): Promise<ScenarioResult> {
  const { inventory } = context.stack;
  return readScenario(
    context,
    'availability-party',
    `trip availability for ${benchParty}, ${context.options.connections} connections, ${inventory.trips.toLocaleString('en-US')} trips × ${inventory.seatsPerTrip} seats`,
    partyAvailabilityPaths(context),
    '/availability-party',
  );
}
