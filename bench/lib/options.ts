// `npm run bench -- [flags]`: the full run's figures by default, `--quick` for the CI-sized one.
import { parseArgs } from 'node:util';

export const scenarioIds = [
  'routes',
  'availability',
  'availability-party',
  'login',
  'create',
  'saga',
  'burst',
  'soak',
] as const;
export type ScenarioId = (typeof scenarioIds)[number];

export interface BenchOptions {
  quick: boolean;
  /** Seconds of each measured HTTP load run and of each saga run. */
  durationSeconds: number;
  /** Seconds of the unmeasured HTTP load before a scenario's measured runs, at least. */
  warmUpSeconds: number;
  repeats: number;
  connections: number;
  loginConnections: number;
  trips: number;
  /** Sequential creates per run in the latency scenario. */
  createSamples: number;
  sagaConcurrency: number;
  /**
   * Bookings per saga run, in rounds of `sagaConcurrency`. The last round winds down at falling concurrency, so
   * with four rounds a quarter of a run was its tail; eight rounds halve that share.
   */
  sagaRounds: number;
  burstRequests: number;
  burstSeats: number;
  soakBookings: number;
  soakMinutes: number;
  scenarios: ScenarioId[];
  build: boolean;
  resultsDirectory: string;
}

export const usage = `usage: npm run bench -- [--quick] [flags]
  --quick                 CI size: under three minutes, small figures (never a pass/fail on them)
  --duration <s>          seconds per measured HTTP load run (10; quick 2)
  --warm-up <s>           seconds of unmeasured load before an HTTP scenario (5; quick 1)
  --repeats <n>           runs of each side, alternated (3; quick 2)
  --connections <n>       HTTP connections for the read scenarios (50)
  --login-connections <n> connections for the login scenario (8)
  --trips <n>             bench trips of 50 seats (20000; quick 2000)
  --create-samples <n>    sequential creates per latency run (40; quick 8)
  --saga-concurrency <n>  bookings driven at once in the saga scenario (30; quick 10)
  --saga-rounds <n>       bookings per saga run, in rounds of that concurrency (8; quick 2)
  --burst-requests <n>    concurrent creates in the burst, half REST, half gRPC (240)
  --burst-seats <n>       seats they compete for (10)
  --soak-bookings <n>     open bookings made before the memory soak (10000; quick 60)
  --soak-minutes <m>      minutes the worker's RSS is watched after them (10; quick 0.2)
  --only <a,b,...>        run only these of: ${scenarioIds.join(', ')}
  --no-build              use dist/ as it is
  --results <dir>         where the JSON and SVG go (bench/results)`;

function positiveNumber(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0)
    throw new Error(`--${flag} must be a positive number, got "${value}"`);
  return number;
}

function wholeNumber(value: string | undefined, flag: string, fallback: number): number {
  const number = positiveNumber(value, flag, fallback);
  if (!Number.isInteger(number)) throw new Error(`--${flag} must be a whole number, got "${value}"`);
  return number;
}

export function parseBenchOptions(argv: readonly string[]): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      'warm-up': { type: 'string' },
      repeats: { type: 'string' },
      connections: { type: 'string' },
      'login-connections': { type: 'string' },
      trips: { type: 'string' },
      'create-samples': { type: 'string' },
      'saga-concurrency': { type: 'string' },
      'saga-rounds': { type: 'string' },
      'burst-requests': { type: 'string' },
      'burst-seats': { type: 'string' },
      'soak-bookings': { type: 'string' },
      'soak-minutes': { type: 'string' },
      only: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      results: { type: 'string', default: 'bench/results' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const quick = values.quick;
  const requested = values.only?.split(',').map((name) => name.trim()) ?? [...scenarioIds];
  const unknown = requested.filter((name) => !(scenarioIds as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`--only names unknown scenarios: ${unknown.join(', ')}`);
  const burstRequests = wholeNumber(values['burst-requests'], 'burst-requests', 240);
  const burstSeats = wholeNumber(values['burst-seats'], 'burst-seats', 10);
  if (burstSeats > 40) throw new Error('--burst-seats must be at most 40, the free seats of one bench trip');
  return {
    quick,
    durationSeconds: positiveNumber(values.duration, 'duration', quick ? 2 : 10),
    warmUpSeconds: positiveNumber(values['warm-up'], 'warm-up', quick ? 1 : 5),
    // Three in a full run: the median of three sets aside one run a neighbour on this shared machine disturbed.
    repeats: wholeNumber(values.repeats, 'repeats', quick ? 2 : 3),
    connections: wholeNumber(values.connections, 'connections', 50),
    loginConnections: wholeNumber(values['login-connections'], 'login-connections', 8),
    trips: wholeNumber(values.trips, 'trips', quick ? 2000 : 20_000),
    createSamples: wholeNumber(values['create-samples'], 'create-samples', quick ? 8 : 40),
    sagaConcurrency: wholeNumber(values['saga-concurrency'], 'saga-concurrency', quick ? 10 : 30),
    sagaRounds: wholeNumber(values['saga-rounds'], 'saga-rounds', quick ? 2 : 8),
    burstRequests,
    burstSeats,
    soakBookings: wholeNumber(values['soak-bookings'], 'soak-bookings', quick ? 60 : 10_000),
    soakMinutes: positiveNumber(values['soak-minutes'], 'soak-minutes', quick ? 0.2 : 10),
    scenarios: scenarioIds.filter((id) => requested.includes(id)),
    build: !values['no-build'],
    resultsDirectory: values.results,
  };
}
