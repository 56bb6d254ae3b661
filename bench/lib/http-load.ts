// HTTP load with autocannon in this process: a fixed number of connections for a fixed time.
import autocannon from 'autocannon';

export interface HttpLoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface HttpLoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** Called for every request: rotates paths, tokens and bodies so no one cache line or account carries the load. */
  nextRequest: () => HttpLoadRequest;
}

export async function httpLoad(
  options: HttpLoadOptions,
): Promise<{ operations: number; figures: Record<string, number> }> {
  const first = options.nextRequest();
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
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

/** A short unmeasured run, so the first measured one does not pay for JIT compilation and cold caches. */
export async function warmUp(options: Omit<HttpLoadOptions, 'durationSeconds'>): Promise<void> {
  await httpLoad({ ...options, durationSeconds: 1 });
}
