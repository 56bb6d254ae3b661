#!/usr/bin/env bash
# Checks the monitoring files under deploy/: the Prometheus config and alert rules (promtool check config, check
# rules, test rules; each alert's severity, annotations and runbook section in docs/operations.md) and the Grafana
# dashboards (valid JSON, every query parses, every metric they name exists).
set -euo pipefail
cd "$(dirname "$0")/.."

promtool() { bash scripts/promtool.sh "$@"; }

echo '-- promtool check config (scrape config and the rule files it loads)'
promtool check config deploy/prometheus/prometheus.yml
echo '-- promtool check rules'
promtool check rules deploy/prometheus/alerts.yml
echo '-- promtool test rules (a firing and a quiet case per alert)'
promtool test rules deploy/prometheus/alerts.test.yml

# The metrics the rules and dashboards may name: the metric contract of the API and worker processes (see
# docs/operations.md, "Metrics"; each bus_booking_ name must be registered under src/), the Temporal SDK's and
# server's metrics we use, the process metrics and `up`. A name outside this list is a typo or a metric nobody
# exports, and its panel or alert would stay silent.
known_metrics=$(
  cat <<'NAMES'
histogram bus_booking_http_request_duration_seconds
histogram bus_booking_grpc_request_duration_seconds
gauge bus_booking_http_requests_in_flight
gauge bus_booking_grpc_requests_in_flight
counter bus_booking_idempotent_replays_total
counter bus_booking_request_refusals_total
counter bus_booking_token_verification_failures_total
counter bus_booking_booking_transitions_total
counter bus_booking_seats_held_total
counter bus_booking_seats_released_total
counter bus_booking_payments_total
counter bus_booking_refunds_total
counter bus_booking_refunded_amount_minor_total
counter bus_booking_compensations_total
counter bus_booking_notifications_total
gauge bus_booking_pending_payment_overdue_bookings
counter bus_booking_payment_events_total
counter bus_booking_payment_webhook_refusals_total
counter bus_booking_webhook_attempts_total
histogram bus_booking_webhook_delivery_latency_seconds
counter bus_booking_webhook_endpoints_disabled_total
counter bus_booking_webhook_swept_events_total
counter bus_booking_payment_reconciliation_passes_total
histogram temporal_activity_schedule_to_start_latency
histogram temporal_workflow_task_schedule_to_start_latency
histogram temporal_activity_execution_latency
histogram temporal_workflow_task_execution_latency
histogram temporal_local_activity_execution_latency
counter temporal_activity_execution_failed
counter temporal_workflow_task_execution_failed
gauge temporal_num_pollers
gauge temporal_worker_task_slots_available
gauge temporal_sticky_cache_size
counter no_poller_tasks
gauge approximate_backlog_count
counter process_cpu_seconds_total
gauge process_resident_memory_bytes
gauge nodejs_eventloop_lag_p99_seconds
gauge up
NAMES
)

echo '-- Grafana dashboards: JSON, PromQL syntax, metric names'
queries_file=$(mktemp --suffix=.yml)
trap 'rm -f "$queries_file"' EXIT
KNOWN_METRICS="$known_metrics" QUERIES_FILE="$queries_file" node - <<'JS'
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const known = new Map(
  process.env.KNOWN_METRICS.trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .map(([kind, name]) => [name, kind]),
);
const rules = YAML.parse(fs.readFileSync('deploy/prometheus/alerts.yml', 'utf8'));
const recorded = new Set(rules.groups.flatMap((group) => group.rules.filter((rule) => rule.record).map((rule) => rule.record)));

const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'Inf', 'NaN']);
/** Metric names in a PromQL expression: identifiers that are not functions, keywords, labels or durations. */
function metricNames(expression) {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+[0-9]+[smhdwy]+/g, ' ');
  const names = [];
  for (const match of bare.matchAll(/(?<![0-9.A-Za-z_:])[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const rest = bare.slice(match.index + match[0].length).trimStart();
    if (rest.startsWith('(') || keywords.has(match[0])) continue;
    names.push(match[0]);
  }
  return names;
}
function isKnown(name) {
  if (known.has(name) || recorded.has(name)) return true;
  const histogram = name.match(/^(.*)_(bucket|count|sum)$/);
  return histogram !== null && known.get(histogram[1]) === 'histogram';
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const runbookAnchors = new Set(
  [...fs.readFileSync('docs/operations.md', 'utf8').matchAll(/^#{2,4} (.+)$/gm)].map((heading) =>
    heading[1].toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-'),
  ),
);

const problems = [];
for (const group of rules.groups) {
  for (const rule of group.rules) {
    for (const name of metricNames(rule.expr)) {
      if (!isKnown(name)) problems.push(`alerts.yml ${rule.alert ?? rule.record}: unknown metric ${name}`);
    }
    if (rule.alert === undefined) continue;
    // An operator paged at night needs to know how bad it is, what it means and where the steps are.
    if (!['critical', 'warning'].includes(rule.labels?.severity)) {
      problems.push(`alerts.yml ${rule.alert}: severity label must be critical or warning`);
    }
    for (const annotation of ['summary', 'description', 'runbook_url']) {
      if (!rule.annotations?.[annotation]) problems.push(`alerts.yml ${rule.alert}: no ${annotation} annotation`);
    }
    const anchor = /^docs\/operations\.md#([a-z0-9-]+)$/.exec(rule.annotations?.runbook_url ?? '')?.[1];
    if (anchor === undefined || !runbookAnchors.has(anchor)) {
      problems.push(`alerts.yml ${rule.alert}: runbook_url names no section of docs/operations.md`);
    }
  }
}

// Every alert is proven to fire by at least one case of alerts.test.yml.
const ruleTests = YAML.parse(fs.readFileSync('deploy/prometheus/alerts.test.yml', 'utf8')).tests.flatMap(
  (test) => test.alert_rule_test ?? [],
);
for (const rule of rules.groups.flatMap((group) => group.rules).filter((candidate) => candidate.alert)) {
  if (!ruleTests.some((test) => test.alertname === rule.alert && test.exp_alerts.length > 0)) {
    problems.push(`alerts.test.yml: no case where ${rule.alert} fires`);
  }
}

// Our own metrics must be registered by the code under these names: a rename there fails here, not on a dashboard.
const sourceText = fs
  .readdirSync('src', { recursive: true })
  .filter((file) => String(file).endsWith('.ts'))
  .map((file) => fs.readFileSync(path.join('src', String(file)), 'utf8'))
  .join('\n');
for (const name of known.keys()) {
  if (name.startsWith('bus_booking_') && !sourceText.includes(`'${name}'`)) {
    problems.push(`${name}: no metric of that name is registered under src/`);
  }
}

const dashboardsDirectory = 'deploy/grafana/dashboards';
const queryRules = [];
let panelCount = 0;
for (const file of fs.readdirSync(dashboardsDirectory).filter((name) => name.endsWith('.json'))) {
  let dashboard;
  try {
    dashboard = JSON.parse(fs.readFileSync(path.join(dashboardsDirectory, file), 'utf8'));
  } catch (error) {
    problems.push(`${file}: not valid JSON (${error.message})`);
    continue;
  }
  const panels = (dashboard.panels ?? []).flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  for (const panel of panels.filter((candidate) => candidate.type !== 'row')) {
    panelCount += 1;
    if (!Array.isArray(panel.targets) || panel.targets.length === 0) problems.push(`${file} "${panel.title}": no query`);
    for (const target of panel.targets ?? []) {
      for (const name of metricNames(target.expr)) {
        if (!isKnown(name)) problems.push(`${file} "${panel.title}": unknown metric ${name}`);
      }
      // Grafana's interval variables stand for a duration; promtool parses the query with one in their place.
      const expr = target.expr.replace(/\$__(rate_interval|interval|range)/g, '5m');
      queryRules.push({ record: `dashboard:query:${queryRules.length}`, expr });
    }
  }
  console.log(`${file}: ${panelCount} panels, ${queryRules.length} queries`);
}
fs.writeFileSync(process.env.QUERIES_FILE, YAML.stringify({ groups: [{ name: 'dashboard-queries', rules: queryRules }] }));
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('every metric named is known; every alert has its runbook section and a firing test');
JS
# promtool parses each dashboard query as if it were a recording rule: a syntax error fails here, not on screen.
promtool check rules "$queries_file" >/dev/null
echo 'every dashboard query parses'
echo 'monitoring: ok'
