{{/*
Names, labels, images, resources and the environment shared by every component template.
Component templates (templates/_component.tpl) receive a context dict:
  (dict "root" $ "key" "<services key>")   e.g. (dict "root" $ "key" "decisionRunner")
*/}}

{{/*
The services of the chart: values key -> application name (dist/apps/<name>, resource suffix).
The single list every loop (validation, NOTES) uses; templates/<name>/ holds one folder per entry.
*/}}
{{- define "decision-service.components" -}}
gateway: gateway
decisionRunner: decision-runner
engineProxy: engine-proxy
delivery: delivery
billingLedger: billing-ledger
partner: partner
{{- end }}

{{- define "decision-service.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "decision-service.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "decision-service.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of chart-wide resources (root context). */}}
{{- define "decision-service.labels" -}}
helm.sh/chart: {{ include "decision-service.chart" . }}
app.kubernetes.io/name: {{ include "decision-service.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: {{ include "decision-service.name" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Component helpers: context (dict "root" $ "key" "<services key>"). */}}
{{- define "decision-service.app" -}}
{{- $apps := include "decision-service.components" .root | fromYaml }}
{{- required (printf "unknown component %q" .key) (get $apps .key) }}
{{- end }}

{{- define "decision-service.componentFullname" -}}
{{- printf "%s-%s" (include "decision-service.fullname" .root) (include "decision-service.app" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "decision-service.selectorLabels" -}}
app.kubernetes.io/name: {{ include "decision-service.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ include "decision-service.app" . }}
{{- end }}

{{- define "decision-service.componentLabels" -}}
{{ include "decision-service.labels" .root }}
app.kubernetes.io/component: {{ include "decision-service.app" . }}
{{- end }}

{{/* metadata.annotations block (commonAnnotations + extra dict), or nothing. Context: (dict "root" $ "extra" dict) */}}
{{- define "decision-service.annotations" -}}
{{- $all := merge (dict) (default (dict) .extra) (default (dict) .root.Values.commonAnnotations) }}
{{- with $all }}
{{- printf "annotations:\n%s" (toYaml . | indent 2) }}
{{- end }}
{{- end }}

{{- define "decision-service.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "decision-service.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "decision-service.configName" -}}
{{- printf "%s-config" (include "decision-service.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "decision-service.secretName" -}}
{{- printf "%s-secrets" (include "decision-service.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Image reference of a component: per-service overrides, then `image`, then global.imageRegistry. */}}
{{- define "decision-service.image" -}}
{{- $img := .root.Values.image }}
{{- $own := (index .root.Values.services .key).image | default (dict) }}
{{- $registry := coalesce .root.Values.global.imageRegistry $own.registry $img.registry }}
{{- $repository := coalesce $own.repository $img.repository }}
{{- $digest := coalesce $own.digest $img.digest }}
{{- $tag := coalesce $own.tag $img.tag .root.Chart.AppVersion | toString }}
{{- $ref := ternary $repository (printf "%s/%s" $registry $repository) (empty $registry) }}
{{- if $digest }}
{{- printf "%s@%s" $ref $digest }}
{{- else }}
{{- printf "%s:%s" $ref $tag }}
{{- end }}
{{- end }}

{{/*
Resources presets: requests plus a memory limit; no CPU limit (CPU limits throttle Node's event loop
and GC for no gain when requests are right). Context: (dict "preset" name "resources" dict).
*/}}
{{- define "decision-service.resources" -}}
{{- if .resources }}
{{- toYaml .resources }}
{{- else }}
{{- $presets := dict
  "nano"   (dict "requests" (dict "cpu" "50m"  "memory" "96Mi")  "limits" (dict "memory" "192Mi"))
  "micro"  (dict "requests" (dict "cpu" "100m" "memory" "160Mi") "limits" (dict "memory" "320Mi"))
  "small"  (dict "requests" (dict "cpu" "250m" "memory" "256Mi") "limits" (dict "memory" "512Mi"))
  "medium" (dict "requests" (dict "cpu" "500m" "memory" "512Mi") "limits" (dict "memory" "1Gi"))
  "large"  (dict "requests" (dict "cpu" "1"    "memory" "1Gi")   "limits" (dict "memory" "2Gi"))
  "xlarge" (dict "requests" (dict "cpu" "2"    "memory" "2Gi")   "limits" (dict "memory" "4Gi"))
}}
{{- $preset := default "none" .preset }}
{{- if ne $preset "none" }}
{{- if not (hasKey $presets $preset) }}
{{- fail (printf "resourcesPreset %q is not one of none, nano, micro, small, medium, large, xlarge" $preset) }}
{{- end }}
{{- toYaml (get $presets $preset) }}
{{- end }}
{{- end }}
{{- end }}

{{/* SHUTDOWN_GRACE_MS of a component. */}}
{{- define "decision-service.shutdownGraceMs" -}}
{{- $svc := index .root.Values.services .key }}
{{- if kindIs "invalid" $svc.shutdownGraceMs }}{{ int64 .root.Values.config.shutdownGraceMs }}{{ else }}{{ int64 $svc.shutdownGraceMs }}{{ end }}
{{- end }}

{{/* Seconds a pod needs to stop cleanly: preStop sleep + drain (rounded up). */}}
{{- define "decision-service.stopSeconds" -}}
{{- $ms := include "decision-service.shutdownGraceMs" . | int64 }}
{{- add (int64 .root.Values.lifecycle.preStopSleepSeconds) (div (add $ms 999) 1000) }}
{{- end }}

{{- define "decision-service.terminationGracePeriodSeconds" -}}
{{- $svc := index .root.Values.services .key }}
{{- if kindIs "invalid" $svc.terminationGracePeriodSeconds }}
{{- add (include "decision-service.stopSeconds" . | int64) (int64 .root.Values.lifecycle.terminationGraceMarginSeconds) }}
{{- else }}
{{- int64 $svc.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/* BASE_URL: explicit, else derived from the first Ingress host, else empty (service default). */}}
{{- define "decision-service.baseUrl" -}}
{{- $gw := .Values.config.gateway }}
{{- if $gw.baseUrl }}
{{- $gw.baseUrl }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- $host := (first .Values.ingress.hosts).host }}
{{- if $host }}
{{- $tls := false }}
{{- range .Values.ingress.tls }}{{ if has $host (default (list) .hosts) }}{{ $tls = true }}{{ end }}{{ end }}
{{- printf "%s://%s" (ternary "https" "http" $tls) $host }}
{{- end }}
{{- end }}
{{- end }}

{{/* Non-secret environment shared by every service (common ConfigMap data). Root context. */}}
{{- define "decision-service.commonConfigData" -}}
{{- if not .Values.nats.existingSecret }}
NATS_URL: {{ .Values.nats.url | quote }}
{{- end }}
LOG_LEVEL: {{ .Values.config.logLevel | quote }}
{{- with .Values.config.tracing.otlpEndpoint }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ . | quote }}
{{- end }}
OPS_PORT: {{ .Values.config.opsPort | toString | quote }}
SHUTDOWN_GRACE_MS: {{ int64 .Values.config.shutdownGraceMs | toString | quote }}
{{- end }}

{{/*
Non-secret environment of one service (its own ConfigMap): service-specific settings, a
SHUTDOWN_GRACE_MS override, then services.<name>.env (which wins). Empty values are left out.
*/}}
{{- define "decision-service.componentConfigData" -}}
{{- $root := .root }}
{{- $c := $root.Values.config }}
{{- $svc := index $root.Values.services .key }}
{{- $data := dict }}
{{- if eq .key "gateway" }}
{{- $base := include "decision-service.baseUrl" $root }}
{{- $_ := set $data "PORT" (toString $c.gateway.port) }}
{{- $_ := set $data "BASE_URL" $base }}
{{- $_ := set $data "APP_URL" (default $base $c.gateway.appUrl) }}
{{- with $c.gateway.mailFrom }}
{{- $_ := set $data "MAIL_FROM" . }}
{{- end }}
{{- else if or (eq .key "billingLedger") (eq .key "decisionRunner") (eq .key "partner") }}
{{- /* Links to the application: billing and plan upgrades in 402 errors, embed sessions' launch URLs. */}}
{{- $_ := set $data "APP_URL" (default (include "decision-service.baseUrl" $root) $c.gateway.appUrl) }}
{{- if eq .key "decisionRunner" }}
{{- /* The runner calls sync agents under the same address rules as deliveries. */}}
{{- $_ := set $data "DELIVERY_ALLOW_PRIVATE_TARGETS" (toString $c.delivery.allowPrivateTargets) }}
{{- $_ := set $data "BILLING_LEASES" (toString $c.billing.leases) }}
{{- else if eq .key "billingLedger" }}
{{- $_ := set $data "BILLING_MONEY_LEASES" (toString $c.billing.moneyLeases) }}
{{- end }}
{{- else if eq .key "engineProxy" }}
{{- $_ := set $data "ENGINE_DEFAULT" $c.engine.default }}
{{- $_ := set $data "ENGINE_LLM_PROVIDER" $c.engine.llm.provider }}
{{- $_ := set $data "ENGINE_LLM_BASE_URL" $c.engine.llm.baseUrl }}
{{- $_ := set $data "ENGINE_LLM_MODEL" $c.engine.llm.model }}
{{- $_ := set $data "ENGINE_CHECKPOINT_BASE_URL" $c.engine.checkpoint.baseUrl }}
{{- $_ := set $data "ENGINE_CHECKPOINT_MODEL" $c.engine.checkpoint.model }}
{{- if not (kindIs "invalid" $c.engine.sharedSlots) }}
{{- $_ := set $data "ENGINE_SHARED_SLOTS" (int64 $c.engine.sharedSlots | toString) }}
{{- end }}
{{- if not (kindIs "invalid" $c.engine.slotQueue) }}
{{- $_ := set $data "ENGINE_SLOT_QUEUE" (int64 $c.engine.slotQueue | toString) }}
{{- end }}
{{- else if eq .key "delivery" }}
{{- $_ := set $data "DELIVERY_ALLOW_PRIVATE_TARGETS" (toString $c.delivery.allowPrivateTargets) }}
{{- $_ := set $data "DELIVERY_RETRY_SCALE" (toString $c.delivery.retryScale) }}
{{- $_ := set $data "DELIVERY_PURGE_INTERVAL_MS" (int64 $c.delivery.purgeIntervalMs | toString) }}
{{- end }}
{{- if not (kindIs "invalid" $svc.shutdownGraceMs) }}
{{- $_ := set $data "SHUTDOWN_GRACE_MS" (int64 $svc.shutdownGraceMs | toString) }}
{{- end }}
{{- range $k, $v := $svc.env }}
{{- $_ := set $data $k (toString $v) }}
{{- end }}
{{- range $k, $v := $data }}
{{- if ne $v "" }}
{{ $k }}: {{ $v | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Secret data rendered by the chart: only values given inline (an existingSecret wins). Root context.
*/}}
{{- define "decision-service.secretData" -}}
{{- if and .Values.database.url (not .Values.database.existingSecret) }}
DATABASE_URL: {{ .Values.database.url | b64enc | quote }}
{{- end }}
{{- if and .Values.redis.url (not .Values.redis.existingSecret) }}
REDIS_URL: {{ .Values.redis.url | b64enc | quote }}
{{- end }}
{{- with .Values.config.gateway.adminToken }}
{{- if and .value (not .existingSecret) }}
ADMIN_TOKEN: {{ .value | b64enc | quote }}
{{- end }}
{{- end }}
{{- with .Values.config.gateway.smtpUrl }}
{{- if and .value (not .existingSecret) }}
SMTP_URL: {{ .value | b64enc | quote }}
{{- end }}
{{- end }}
{{- with .Values.config.engine.llm.apiKey }}
{{- if and .value (not .existingSecret) }}
ENGINE_LLM_API_KEY: {{ .value | b64enc | quote }}
{{- end }}
{{- end }}
{{- with .Values.config.engine.credentialsKey }}
{{- if and .value (not .existingSecret) }}
ENGINE_CREDENTIALS_KEY: {{ .value | b64enc | quote }}
{{- end }}
{{- end }}
{{- with .Values.config.delivery.secretsKey }}
{{- if and .value (not .existingSecret) }}
DELIVERY_SECRETS_KEY: {{ .value | b64enc | quote }}
{{- end }}
{{- end }}
{{- with .Values.config.decisionRunner.secretsKey }}
{{- if and .value (not .existingSecret) }}
RUNNER_SECRETS_KEY: {{ .value | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
One secretKeyRef env entry, or nothing when neither an existing Secret nor an inline value is given.
Context: (dict "root" $ "env" NAME "ref" <values block with existingSecret/existingSecretKey> "inline" value "optional" bool)
*/}}
{{- define "decision-service.secretEnv" -}}
{{- if .ref.existingSecret }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.existingSecret }}
      key: {{ .ref.existingSecretKey }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- else if .inline }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ include "decision-service.secretName" .root }}
      key: {{ .env }}
{{- end }}
{{- end }}

{{/* Environment of a component's containers (service and migrations). */}}
{{- define "decision-service.envFrom" -}}
{{- $svc := index .root.Values.services .key }}
- configMapRef:
    name: {{ include "decision-service.configName" .root }}
- configMapRef:
    name: {{ include "decision-service.componentFullname" . }}
{{- with $svc.extraEnvFrom }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "decision-service.env" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $svc := index $v.services .key }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "NATS_URL" "ref" $v.nats "inline" "") }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "DATABASE_URL" "ref" $v.database "inline" $v.database.url) }}
{{- if has .key (list "gateway" "engineProxy" "delivery" "decisionRunner" "billingLedger") }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "REDIS_URL" "ref" $v.redis "inline" $v.redis.url) }}
{{- end }}
{{- if eq .key "gateway" }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "ADMIN_TOKEN" "ref" $v.config.gateway.adminToken "inline" $v.config.gateway.adminToken.value "optional" true) }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "SMTP_URL" "ref" $v.config.gateway.smtpUrl "inline" $v.config.gateway.smtpUrl.value "optional" true) }}
{{- end }}
{{- if eq .key "engineProxy" }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "ENGINE_LLM_API_KEY" "ref" $v.config.engine.llm.apiKey "inline" $v.config.engine.llm.apiKey.value "optional" true) }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "ENGINE_CREDENTIALS_KEY" "ref" $v.config.engine.credentialsKey "inline" $v.config.engine.credentialsKey.value) }}
{{- end }}
{{- if eq .key "delivery" }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "DELIVERY_SECRETS_KEY" "ref" $v.config.delivery.secretsKey "inline" $v.config.delivery.secretsKey.value) }}
{{- end }}
{{- if eq .key "decisionRunner" }}
{{- include "decision-service.secretEnv" (dict "root" $root "env" "RUNNER_SECRETS_KEY" "ref" $v.config.decisionRunner.secretsKey "inline" $v.config.decisionRunner.secretsKey.value) }}
{{- end }}
{{- if $v.nats.auth.enabled }}
{{- $app := include "decision-service.app" . }}
- name: NATS_USER
  value: {{ $app | quote }}
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $v.nats.auth.existingSecret }}
      key: {{ $app }}
{{- end }}
{{- if $v.nats.tls.enabled }}
- name: NATS_TLS_CA_FILE
  value: /etc/nats-tls/ca.crt
{{- if $v.nats.tls.clientCertificate }}
- name: NATS_TLS_CERT_FILE
  value: /etc/nats-tls/tls.crt
- name: NATS_TLS_KEY_FILE
  value: /etc/nats-tls/tls.key
{{- end }}
{{- end }}
{{- with $svc.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The NATS server's authorization block: one user per enabled service, its rights from
files/nats-permissions.json (the lists libs/contracts declares; a unit test keeps them equal). Passwords
are NATS config variables resolved from the server's environment (DS_NATS_PASSWORD_<SERVICE>), so the
block holds no secret. Root context.
*/}}
{{- define "decision-service.natsAuthorization" -}}
{{- $permissions := .Files.Get "files/nats-permissions.json" | fromJson }}
{{- $apps := include "decision-service.components" . | fromYaml }}
authorization {
  users = [
{{- range $key, $app := $apps }}
{{- if (index $.Values.services $key).enabled }}
{{- $p := index $permissions $app }}
    {
      user: {{ $app | quote }}
      password: ${{ printf "DS_NATS_PASSWORD_%s" ($app | upper | replace "-" "_") }}
      permissions: {
        publish: { allow: [{{ range $i, $subject := $p.publish }}{{ if $i }}, {{ end }}{{ $subject | quote }}{{ end }}] }
        subscribe: { allow: [{{ range $i, $subject := $p.subscribe }}{{ if $i }}, {{ end }}{{ $subject | quote }}{{ end }}] }
        allow_responses: true
      }
    }
{{- end }}
{{- end }}
  ]
}
{{- end }}
