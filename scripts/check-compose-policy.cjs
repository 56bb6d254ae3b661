// Checks the review rules on a resolved compose file (`docker-compose config` on stdin): limits, health checks, TLS, replicas.
'use strict';
const fs = require('node:fs');
const { parse } = require('yaml');

const resolved = parse(fs.readFileSync(0, 'utf8'));
const services = resolved.services ?? {};
const problems = [];

/** One-shot jobs end by design: dependents wait for service_completed_successfully, so they carry no health check. */
function isOneShot(service) {
  return typeof service.restart === 'string' && service.restart.startsWith('on-failure');
}

/** `healthcheck: {disable: true}` comes out of `config` as `test: [NONE]`. */
function isDisabled(check) {
  return check?.disable === true || (Array.isArray(check?.test) && check.test[0] === 'NONE');
}

const bookingServices = ['api', 'worker', 'migrate'];
const temporalClients = ['api', 'worker', 'migrate', 'temporal-namespace'];

for (const [name, service] of Object.entries(services)) {
  const limits = service.deploy?.resources?.limits ?? {};
  if (limits.cpus === undefined || limits.memory === undefined) {
    problems.push(`${name}: deploy.resources.limits needs both cpus and memory`);
  }
  const check = service.healthcheck;
  if (isOneShot(service)) {
    if (!isDisabled(check)) problems.push(`${name}: a one-shot job should say healthcheck.disable: true`);
  } else if (check === undefined || isDisabled(check) || !Array.isArray(check.test)) {
    problems.push(`${name}: a long-running service needs a health check`);
  }
  if (name === 'api' && (service.ports ?? []).length > 0) {
    problems.push('api: publishes ports; its replicas are reached through the edge proxy only');
  }
}

const minimumApiReplicas = 2;
if (!(Number(services.api?.deploy?.replicas) >= minimumApiReplicas)) {
  problems.push(`api: deploy.replicas should be at least ${minimumApiReplicas}`);
}

for (const name of bookingServices) {
  const environment = services[name]?.environment ?? {};
  if (environment.NODE_ENV !== 'production') problems.push(`${name}: NODE_ENV must be production`);
  if (services[name]?.read_only !== true) problems.push(`${name}: the root file system should be read-only`);
}
for (const name of temporalClients) {
  const environment = services[name]?.environment ?? {};
  for (const variable of [
    'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    'TEMPORAL_TLS_CLIENT_CERT_PATH',
    'TEMPORAL_TLS_CLIENT_KEY_PATH',
    'TEMPORAL_TLS_SERVER_NAME',
  ]) {
    if (!environment[variable])
      problems.push(`${name}: ${variable} is not set (Temporal is reached over mutual TLS)`);
  }
}
const temporal = services.temporal?.environment ?? {};
for (const variable of [
  'TEMPORAL_TLS_FRONTEND_CERT',
  'TEMPORAL_TLS_FRONTEND_KEY',
  'TEMPORAL_TLS_CLIENT1_CA_CERT',
]) {
  if (!temporal[variable]) problems.push(`temporal: ${variable} is not set (frontend TLS)`);
}
if (temporal.TEMPORAL_TLS_REQUIRE_CLIENT_AUTH !== 'true') {
  problems.push('temporal: TEMPORAL_TLS_REQUIRE_CLIENT_AUTH must be true');
}
const ui = services['temporal-ui']?.environment ?? {};
if (!/^https?:\/\/[^/]+\/codec$/.test(ui.TEMPORAL_CODEC_ENDPOINT ?? '')) {
  problems.push(
    "temporal-ui: TEMPORAL_CODEC_ENDPOINT should be the API's <origin>/codec as the browser reaches it",
  );
}
if (ui.TEMPORAL_CODEC_PASS_ACCESS_TOKEN !== 'true') {
  problems.push(
    'temporal-ui: TEMPORAL_CODEC_PASS_ACCESS_TOKEN must be true (the codec endpoint wants a bearer token)',
  );
}

if (problems.length > 0) {
  process.stderr.write(`docker-compose.yml breaks the deployment rules:\n- ${problems.join('\n- ')}\n`);
  process.exit(1);
}
process.stdout.write(
  `docker-compose.yml follows the deployment rules (${Object.keys(services).length} services: limits, health checks, ` +
    `Temporal over mutual TLS, ${services.api.deploy.replicas} API replicas, codec endpoint for the Web UI)\n`,
);
