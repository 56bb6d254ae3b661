// Worker memory with many open bookings: N bookings made and left open, then the worker's RSS watched over a
// window while a few of them are paid (each payment brings its workflow back into the worker), and its slope.
import { measured, type BenchContext, type ScenarioResult } from '../lib/measurement';
import { residentMiB } from '../lib/process-sampler';
import { restCreateUntilHeld, restPay, type Account } from '../lib/service-client';
import { linearFit } from '../lib/statistics';

const requiredSlopePercent = 10;
const requiredOpenBookings = 10_000;
const requiredWindowSeconds = 600;
const createConcurrency = 20;
const payConcurrency = 2;

export interface MemoryPoint {
  seconds: number;
  openBookings: number;
  workerMiB: number;
  apiMiB: number;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

export async function soakScenario(context: BenchContext): Promise<ScenarioResult> {
  const { stack, options, seats } = context;
  const worker = { name: 'worker', pid: stack.worker.pid };
  const api = { name: 'api', pid: stack.api.pid };
  const target = options.soakBookings;
  const windowSeconds = options.soakMinutes * 60;
  const open: { account: Account; bookingId: string }[] = [];
  const creation: MemoryPoint[] = [];
  const window: MemoryPoint[] = [];
  const startedAt = performance.now();
  const point = (): MemoryPoint => ({
    seconds: (performance.now() - startedAt) / 1000,
    openBookings: open.length,
    workerMiB: residentMiB(worker),
    apiMiB: residentMiB(api),
  });
  let workerDied: string | undefined;
  const workerAlive = () => {
    workerDied ??= stack.exitedProcesses().find((exited) => exited.name === 'worker')?.reason;
    return workerDied === undefined;
  };
  let gaveUp: string | undefined;
  let createFailures = 0;
  const failureReasons: Record<string, number> = {};
  let payments = 0;

  const run = await measured(context, 'service', 1, async () => {
    creation.push(point());
    const creationSampler = setInterval(() => creation.push(point()), 2000);
    let next = 0;
    let started = 0;
    try {
      await Promise.all(
        Array.from({ length: createConcurrency }, async () => {
          while (started < target && workerAlive() && gaveUp === undefined) {
            started += 1;
            const account = context.accounts[next++ % context.accounts.length];
            const created = await restCreateUntilHeld(stack.apiUrl, account, seats.next());
            if (['200', '201'].includes(created.status) && created.bookingId !== undefined) {
              open.push({ account, bookingId: created.bookingId });
              if (open.length % 1000 === 0) context.log(`    ${open.length} open bookings`);
            } else {
              createFailures += 1;
              const reason = `create ${created.status} ${created.code ?? ''}`.trim();
              failureReasons[reason] = (failureReasons[reason] ?? 0) + 1;
              started -= 1;
              // The service, not the bench, failing: a finding to report, so the soak stops and says so.
              if (createFailures > target / 10 + 10)
                gaveUp ??= `${createFailures} creates failed (${reason})`;
            }
          }
        }),
      );
    } finally {
      clearInterval(creationSampler);
    }
    creation.push(point());
    if (!workerAlive() || gaveUp !== undefined) {
      context.log(`    the soak stopped with ${open.length} open bookings: ${workerDied ?? gaveUp}`);
      return {
        operations: open.length,
        figures: { openBookings: open.length, payments, createFailures },
        failureReasons,
      };
    }
    context.log(`    ${open.length} open bookings made; watching the worker for ${windowSeconds} s`);

    const windowStartedAt = performance.now();
    const windowEndsAt = windowStartedAt + windowSeconds * 1000;
    const sampleEveryMs = Math.max(1000, Math.min(5000, (windowSeconds * 1000) / 30));
    window.push(point());
    const windowSampler = setInterval(() => window.push(point()), sampleEveryMs);
    const unpaid = [...open];
    try {
      await Promise.all(
        Array.from({ length: payConcurrency }, async () => {
          while (performance.now() < windowEndsAt && unpaid.length > 0) {
            // A booking chosen at random: its workflow is as likely to have left the worker's cache as not.
            const [booking] = unpaid.splice(Math.floor(Math.random() * unpaid.length), 1);
            const paid = await restPay(stack.apiUrl, booking.account, booking.bookingId);
            if (paid.status === '200') payments += 1;
            await sleep(200);
          }
        }),
      );
      const left = windowEndsAt - performance.now();
      if (left > 0) await sleep(left);
    } finally {
      clearInterval(windowSampler);
    }
    window.push(point());
    return {
      operations: open.length,
      figures: { openBookings: open.length, payments, createFailures },
      failureReasons,
    };
  });

  const stoppedBecause = workerDied === undefined ? gaveUp : `the worker process died: ${workerDied}`;
  if (stoppedBecause !== undefined) {
    const peak = Math.max(...creation.map((sample) => sample.workerMiB));
    return {
      id: 'soak',
      title: `worker memory, ${target.toLocaleString('en-US')} open bookings wanted`,
      service: `the soak stopped with ${open.length} open bookings (worker RSS ${creation[0].workerMiB.toFixed(0)} → ${peak.toFixed(0)} MiB at its peak): ${stoppedBecause}`,
      baseline: '–',
      ratioText: '–',
      required: `flat (≤ ${requiredSlopePercent} % slope over a 10-minute soak) at 10,000 open bookings`,
      goal: 'same',
      met: false,
      runs: [run],
      details: { creation, window, createFailures, failureReasons, stoppedBecause },
    };
  }
  const windowStart = window[0].seconds;
  const fit = linearFit(window.map((sample) => ({ x: sample.seconds - windowStart, y: sample.workerMiB })));
  const startMiB = fit.intercept;
  const slopePercent = ((fit.slope * windowSeconds) / startMiB) * 100;
  const before = creation[0].workerMiB;
  const afterCreates = creation.at(-1)!.workerMiB;
  const end = window.at(-1)!.workerMiB;
  const windowText = windowSeconds >= 60 ? `${(windowSeconds / 60).toFixed(1)} min` : `${windowSeconds} s`;
  return {
    id: 'soak',
    title: `worker memory, ${open.length.toLocaleString('en-US')} open bookings, ${windowText} soak`,
    service: `worker RSS ${before.toFixed(0)} → ${afterCreates.toFixed(0)} MiB while opening them, ${afterCreates.toFixed(0)} → ${end.toFixed(0)} MiB over the soak (${payments} paid in it): slope ${slopePercent.toFixed(1)} %`,
    baseline: '–',
    ratioText: '–',
    required: `flat (≤ ${requiredSlopePercent} % slope over a 10-minute soak) at 10,000 open bookings`,
    goal: 'same',
    // A smaller soak than the requirement's says nothing either way about it: no verdict.
    met:
      open.length >= requiredOpenBookings && windowSeconds >= requiredWindowSeconds
        ? slopePercent <= requiredSlopePercent && createFailures === 0
        : undefined,
    runs: [run],
    details: { slopePercent, creation, window, createFailures, payments },
  };
}
