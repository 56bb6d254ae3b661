// A burst of concurrent creates for a few seats, half over REST and half over gRPC: every answer must be a
// business answer (a booking, SEAT_UNAVAILABLE, or "still processing"), none a 5xx, each within the request timeout.
import { measured, type BenchContext, type RunMeasurement, type ScenarioResult } from '../lib/measurement';
import {
  grpcCreate,
  isServerFailure,
  isUnanswered,
  restCreate,
  type CallOutcome,
} from '../lib/service-client';

/** The API's HTTP_REQUEST_TIMEOUT_MS default: a burst answer later than this is one a client gave up on. */
const requestTimeoutMs = 10_000;

function tally(outcomes: readonly CallOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) {
    const key = outcome.code === undefined ? outcome.status : `${outcome.status} ${outcome.code}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function describe(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, count]) => `${count}× ${key}`)
    .join(', ');
}

export async function burstScenario(context: BenchContext): Promise<ScenarioResult> {
  const { stack, options, seats, accounts } = context;
  const runs: RunMeasurement[] = [];
  const answers: { rest: Record<string, number>; grpc: Record<string, number> }[] = [];
  let serverFailures = 0;
  let unanswered = 0;
  let late = 0;
  let slowestMs = 0;
  let booked = 0;
  for (let repeat = 1; repeat <= options.repeats; repeat += 1) {
    const wanted = seats.seatsOnFreshTrip(options.burstSeats);
    let rest: CallOutcome[] = [];
    let grpc: CallOutcome[] = [];
    runs.push(
      await measured(context, 'service', repeat, async () => {
        const calls = Array.from({ length: options.burstRequests }, (_, index) => {
          const seat = wanted[index % wanted.length];
          const account = accounts[index % accounts.length];
          return index % 2 === 0
            ? restCreate(stack.apiUrl, account, seat, requestTimeoutMs * 3).then((outcome) => ({
                front: 'rest',
                outcome,
              }))
            : grpcCreate(context.grpc, account, seat, requestTimeoutMs * 3).then((outcome) => ({
                front: 'grpc',
                outcome,
              }));
        });
        const settled = await Promise.all(calls);
        rest = settled.filter((call) => call.front === 'rest').map((call) => call.outcome);
        grpc = settled.filter((call) => call.front === 'grpc').map((call) => call.outcome);
        const all = [...rest, ...grpc];
        return {
          operations: all.length,
          figures: {
            booked: all.filter((outcome) => outcome.status === '201' || outcome.status === 'OK').length,
            serverFailures: all.filter(isServerFailure).length,
            unanswered: all.filter(isUnanswered).length,
            slowestMs: Math.max(...all.map((outcome) => outcome.milliseconds)),
          },
        };
      }),
    );
    const run = runs[runs.length - 1];
    answers.push({ rest: tally(rest), grpc: tally(grpc) });
    serverFailures += run.figures.serverFailures;
    unanswered += run.figures.unanswered;
    booked = Math.max(booked, run.figures.booked);
    slowestMs = Math.max(slowestMs, run.figures.slowestMs);
    late += [...rest, ...grpc].filter((outcome) => outcome.milliseconds > requestTimeoutMs).length;
    context.log(`    REST: ${describe(answers.at(-1)!.rest)}`);
    context.log(`    gRPC: ${describe(answers.at(-1)!.grpc)}`);
  }
  const half = options.burstRequests / 2;
  return {
    id: 'burst',
    title: `burst: ${options.burstRequests} concurrent creates for ${options.burstSeats} seats (${half} REST, ${half} gRPC)`,
    service: `${serverFailures} answers 5xx, ${unanswered} unanswered, ${late} later than ${requestTimeoutMs / 1000} s, slowest ${(slowestMs / 1000).toFixed(1)} s; REST ${describe(answers[0]?.rest ?? {})}`,
    baseline: '–',
    ratioText: '–',
    required: `0 answers 5xx, every answer within ${requestTimeoutMs / 1000} s`,
    goal: 'same',
    met: serverFailures === 0 && unanswered === 0 && late === 0 && booked <= options.burstSeats,
    runs,
    details: { answers, bookedPerBurstAtMost: booked },
  };
}
