// The V8 flags a booking process starts with, wherever it is launched; a test keeps the Dockerfile, compose file,
// chart and npm scripts equal to them.

/**
 * Nearly all an API request allocates (parsed headers and query, log fields, promises, the response) is garbage once
 * the response is written, so a young generation larger than V8's default 16 MiB semi-spaces is collected less often
 * and promotes less. In alternating bench runs of the read scenarios it took about a sixth off a cached read's CPU:
 * 0.26–0.31 ms per read with the default, 0.21–0.25 ms with 64 MiB; 128 MiB saved nothing more. The price is about
 * 100 MiB more resident memory, inside the API container's 768 MiB limit.
 */
const apiNodeFlags: readonly string[] = ['--max-semi-space-size=64'];

/** The worker keeps its young generation at V8's default: its memory is sized by the workflow cache instead. */
const workerNodeFlags: readonly string[] = [];

/** The flags for a booking process's entry point under dist/src (`api/main.js` or `worker/main.js`). */
export function nodeFlagsOf(entryPoint: string): readonly string[] {
  if (entryPoint === 'api/main.js') return apiNodeFlags;
  if (entryPoint === 'worker/main.js') return workerNodeFlags;
  throw new Error(`no booking process starts from ${entryPoint}`);
}
