// HTTP load with the bench's own driver (bench/http-driver, Go): a fixed number of connections for a fixed time.
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root';

export interface HttpLoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface HttpLoadTarget {
  url: string;
  connections: number;
  /** Sent in turn, round and round: rotates paths, tokens and bodies so no one cache line or account carries the load. */
  requests: readonly HttpLoadRequest[];
}

/** A run lasts a number of seconds, or until a number of requests were sent. */
export type HttpLoadOptions = HttpLoadTarget & ({ durationSeconds: number } | { amount: number });

/** What the driver answers for one run: the requests answered, and the figures a run reports. */
interface DriverOutcome extends Record<string, number> {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

const driverSource = path.join(projectRoot, 'bench', 'http-driver');
const driverBinary = path.join(projectRoot, '.tools', 'bin', 'http-driver');
const driverStamp = path.join(projectRoot, '.tools', 'bin', '.http-driver.source');

function driverSourceHash(): string {
  const hash = crypto.createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go'])
    hash.update(fs.readFileSync(path.join(driverSource, file)));
  return hash.digest('hex');
}

/**
 * Builds the driver into .tools/bin unless the binary there was built from the same source. The first build
 * downloads fasthttp through the Go module proxy; it needs Go, as the load scenarios' k6 does.
 */
export function buildHttpDriver(log: (message: string) => void): void {
  const sourceHash = driverSourceHash();
  const builtFrom =
    fs.existsSync(driverBinary) && fs.existsSync(driverStamp) ? fs.readFileSync(driverStamp, 'utf8') : '';
  if (builtFrom.trim() === sourceHash) return;
  log('building the HTTP load driver (bench/http-driver) into .tools/bin');
  try {
    // Without VCS stamping: a checkout owned by another user would otherwise fail the build.
    execFileSync('go', ['build', '-buildvcs=false', '-o', driverBinary, '.'], {
      cwd: driverSource,
      stdio: 'inherit',
      env: { ...process.env, GOTOOLCHAIN: 'local' },
    });
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing ? 'Go is needed to build the bench’s HTTP load driver (https://go.dev/dl/)' : 'go build failed',
    );
  }
  fs.writeFileSync(driverStamp, `${sourceHash}\n`);
}

export function httpLoad(
  options: HttpLoadOptions,
): Promise<{ operations: number; figures: Record<string, number> }> {
  const job = {
    url: options.url,
    connections: options.connections,
    ...('amount' in options ? { amount: options.amount } : { durationSeconds: options.durationSeconds }),
    timeoutSeconds: 30,
    requests: options.requests,
  };
  return new Promise((resolve, reject) => {
    // A child the bench waits for: its CPU is counted in the bench process's (the `driver` row) once it exits.
    const driver = spawn(driverBinary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    driver.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    driver.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
    driver.once('error', reject);
    driver.once('close', (code) => {
      if (code !== 0) {
        reject(new Error(`the HTTP load driver exited with ${code}: ${errors.trim()}`));
        return;
      }
      const { requests, ...figures } = JSON.parse(output) as DriverOutcome;
      resolve({ operations: requests, figures });
    });
    driver.stdin.end(JSON.stringify(job));
  });
}

/**
 * An unmeasured run, so the measured ones see the service in one state: `seconds` of load (V8 had not finished
 * optimising the request path after one second, and the first of two measured runs cost 10 to 18 % more CPU per
 * request than the second), then the rest of the requests when fewer were sent, so that each distinct request
 * has been answered once and no measured run pays for a cache's first loads.
 */
export async function warmUp(options: HttpLoadTarget, { seconds }: { seconds: number }): Promise<void> {
  const { operations } = await httpLoad({ ...options, durationSeconds: seconds });
  if (operations < options.requests.length) {
    await httpLoad({
      ...options,
      requests: options.requests.slice(operations),
      amount: options.requests.length - operations,
    });
  }
}
