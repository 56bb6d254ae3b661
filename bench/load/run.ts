// `npm run load -- <scenario> [--url URL] [--grpc HOST:PORT] [--cert-dir DIR] [--vus N] [--rate N] [--duration 60s]`:
// runs one k6 scenario against a running stack (`npm start` by default), shows k6's progress, fails when a
// threshold fails, and writes k6's HTML report and its summary under bench/results/load/.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../../src/project-root';

const scenarios = ['bookings', 'routes', 'login', 'grpc-bookings'] as const;

const usage = `usage: npm run load -- <${scenarios.join(' | ')}> [flags]
  --url <url>          REST base URL (API_URL, else http://localhost:$HTTP_PORT, port 8080)
  --grpc <host:port>   gRPC address (GRPC_ADDRESS, else localhost:$GRPC_PORT, port 50051)
  --cert-dir <dir>     ca.crt, client.crt, client.key for mutual TLS (GRPC_CERT_DIR, else $STACK_DATA_DIR/certs)
  --vus <n>            virtual users (10); in the booking scenarios, the users ready for arrivals
  --rate <n>           booking scenarios: new bookings a second, arriving however fast they are answered (3)
  --duration <time>    how long, k6 notation (60s)
  --p95 <ms>           override the scenario's p95 latency threshold
The stack must be seeded in development or test (npm start does), so the load-test accounts exist, and its
rate limits must not be what is measured: start it with RATE_LIMIT_PER_IP=0 RATE_LIMIT_PER_USER=0.`;

function main(): number {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      grpc: { type: 'string' },
      'cert-dir': { type: 'string' },
      vus: { type: 'string' },
      rate: { type: 'string' },
      duration: { type: 'string' },
      p95: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const scenario = positionals[0];
  if (values.help || scenario === undefined || !(scenarios as readonly string[]).includes(scenario)) {
    process.stderr.write(`${usage}\n`);
    return values.help ? 0 : 2;
  }
  const environment = process.env;
  const url = values.url ?? environment.API_URL ?? `http://localhost:${environment.HTTP_PORT ?? 8080}`;
  const grpcAddress =
    values.grpc ?? environment.GRPC_ADDRESS ?? `localhost:${environment.GRPC_PORT ?? 50051}`;
  const certificateDirectory = path.resolve(
    projectRoot,
    values['cert-dir'] ??
      environment.GRPC_CERT_DIR ??
      path.join(environment.STACK_DATA_DIR ?? '.data', 'certs'),
  );
  const resultsDirectory = path.join(projectRoot, 'bench', 'results', 'load');
  fs.mkdirSync(resultsDirectory, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const report = path.join(resultsDirectory, `${scenario}-${stamp}.html`);
  const summary = path.join(resultsDirectory, `${scenario}-${stamp}.json`);

  const k6 = [path.join(projectRoot, 'scripts', 'go-tool.sh'), 'k6'];
  const run = spawnSync(
    'bash',
    [...k6, 'run', '--summary-export', summary, path.join(projectRoot, 'bench', 'load', `${scenario}.js`)],
    {
      cwd: projectRoot,
      stdio: 'inherit',
      env: {
        ...environment,
        BASE_URL: url,
        GRPC_ADDRESS: grpcAddress,
        GRPC_CERT_DIR: certificateDirectory,
        ...(values.vus === undefined ? {} : { VUS: values.vus }),
        ...(values.rate === undefined ? {} : { RATE: values.rate }),
        ...(values.duration === undefined ? {} : { DURATION: values.duration }),
        ...(values.p95 === undefined ? {} : { P95_MS: values.p95 }),
        // The dashboard's HTML export with charts; -1: no dashboard server, so nothing binds a port or waits.
        K6_WEB_DASHBOARD: 'true',
        K6_WEB_DASHBOARD_PORT: '-1',
        K6_WEB_DASHBOARD_EXPORT: report,
      },
    },
  );
  for (const file of [report, summary]) {
    if (fs.existsSync(file)) process.stdout.write(`written: ${path.relative(projectRoot, file)}\n`);
  }
  // k6 exits 99 when a threshold failed: that is this command's failure too.
  return run.status ?? 1;
}

process.exit(main());
