// HTTP load with autocannon in this process: a fixed number of connections for a fixed time.
import autocannon from 'autocannon';

export interface HttpLoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface HttpLoadTarget {
  url: string;
  connections: number;
  /** Called for every request: rotates paths, tokens and bodies so no one cache line or account carries the load. */
  nextRequest: () => HttpLoadRequest;
}

/** A run lasts a number of seconds, or until a number of requests were sent. */
export type HttpLoadOptions = HttpLoadTarget & ({ durationSeconds: number } | { amount: number });

export async function httpLoad(
  options: HttpLoadOptions,
): Promise<{ operations: number; figures: Record<string, number> }> {
  const first = options.nextRequest();
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    ...('amount' in options ? { amount: options.amount } : { duration: options.durationSeconds }),
    timeout: 30,
    requests: [
      {
        ...first,
        setupRequest: () => {
          const next = options.nextRequest();
          return {
            ...next,
            headers: {
              ...(next.body === undefined ? {} : { 'content-type': 'application/json' }),
              ...next.headers,
            },
          };
        },
      },
    ],
  });
  return {
    operations: result.requests.total,
    figures: {
      requestsPerSecond: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
    },
  };
}

/**
 * An unmeasured run, so the measured ones see the service in one state: `seconds` of load (V8 had not finished
 * optimising the request path after one second, and the first of two measured runs cost 10 to 18 % more CPU per
 * request than the second), then the rest of `distinctRequests` (the scenario's distinct paths) when fewer were
 * sent, so that each has been answered once and no measured run pays for a cache's first loads.
 */
export async function warmUp(
  options: HttpLoadTarget,
  { seconds, distinctRequests = 0 }: { seconds: number; distinctRequests?: number },
): Promise<void> {
  const { operations } = await httpLoad({ ...options, durationSeconds: seconds });
  if (operations < distinctRequests) {
    await httpLoad({ ...options, amount: distinctRequests - operations });
  }
}
