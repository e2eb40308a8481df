{{/*
The resources of one service. Each templates/<service>/*.yaml file includes one of these with
  (dict "root" $ "key" "<services key>")
so every service is rendered by the same code, and a service that needs something special can
replace its one-line file.
*/}}

{{/* ConfigMap with the service's own non-secret environment. */}}
{{- define "decision-service.component.configmap" -}}
{{- $svc := index .root.Values.services .key }}
{{- if $svc.enabled }}
{{- $data := include "decision-service.componentConfigData" . | trim }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "decision-service.componentFullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "decision-service.componentLabels" . | nindent 4 }}
  {{- with include "decision-service.annotations" (dict "root" .root) }}
  {{- . | nindent 2 }}
  {{- end }}
{{- if $data }}
data:
  {{- $data | nindent 2 }}
{{- else }}
data: {}
{{- end }}
{{- end }}
{{- end }}

{{- define "decision-service.component.deployment" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $svc := index $v.services .key }}
{{- if $svc.enabled }}
{{- $app := include "decision-service.app" . }}
{{- $name := include "decision-service.componentFullname" . }}
{{- $image := include "decision-service.image" . }}
{{- $main := printf "/app/dist/apps/%s/src/main.js" $app }}
{{- $env := include "decision-service.env" . | trim }}
{{- $envFrom := include "decision-service.envFrom" . | trim }}
{{- $checksum := printf "%s\n%s\n%s" (include "decision-service.commonConfigData" $root) (include "decision-service.componentConfigData" .) (include "decision-service.secretData" $root) | sha256sum }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "decision-service.componentLabels" . | nindent 4 }}
  {{- with include "decision-service.annotations" (dict "root" $root) }}
  {{- . | nindent 2 }}
  {{- end }}
spec:
  {{- if not (or $svc.autoscaling.enabled (and (eq .key "delivery") $root.Values.keda.enabled)) }}
  replicas: {{ $svc.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      # Keep full capacity during a rollout: one new pod at a time becomes ready before an old one drains, which
      # is the order `npm run upgrade:check` proves under load (docs/upgrading.md).
      maxSurge: 1
      maxUnavailable: 0
  selector:
    matchLabels:
      {{- include "decision-service.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "decision-service.selectorLabels" . | nindent 8 }}
        app.kubernetes.io/version: {{ $root.Chart.AppVersion | quote }}
        app.kubernetes.io/part-of: {{ include "decision-service.name" $root }}
        {{- with $v.commonLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with $svc.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # Roll the pods when their configuration changes.
        checksum/config: {{ $checksum }}
        {{- if and $v.metrics.podAnnotations (not $v.metrics.serviceMonitor.enabled) }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $v.config.opsPort | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $svc.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "decision-service.serviceAccountName" $root }}
      automountServiceAccountToken: {{ $v.serviceAccount.automountServiceAccountToken }}
      # No *_SERVICE_HOST/*_PORT variables: a Service named e.g. "nats" would inject NATS_PORT.
      enableServiceLinks: false
      {{- with $v.global.imagePullSecrets }}
      imagePullSecrets:
        {{- range . }}
        - name: {{ . }}
        {{- end }}
      {{- end }}
      {{- with $svc.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- toYaml $v.podSecurityContext | nindent 8 }}
      # preStop sleep + SHUTDOWN_GRACE_MS drain + margin (see values `lifecycle`).
      terminationGracePeriodSeconds: {{ include "decision-service.terminationGracePeriodSeconds" . }}
      {{- if $v.migrations.enabled }}
      initContainers:
        - name: migrate
          image: {{ $image }}
          imagePullPolicy: {{ $v.image.pullPolicy }}
          args: ["node", {{ $main | quote }}, "migrate"]
          {{- with $envFrom }}
          envFrom:
            {{- . | nindent 12 }}
          {{- end }}
          {{- with $env }}
          env:
            {{- . | nindent 12 }}
          {{- end }}
          {{- with include "decision-service.resources" (dict "preset" $v.migrations.resourcesPreset "resources" $v.migrations.resources) }}
          resources:
            {{- . | nindent 12 }}
          {{- end }}
          securityContext:
            {{- toYaml $v.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with $v.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      {{- end }}
      containers:
        - name: {{ $app }}
          image: {{ $image }}
          imagePullPolicy: {{ $v.image.pullPolicy }}
          {{- if $svc.args }}
          args:
            {{- toYaml $svc.args | nindent 12 }}
          {{- else }}
          args: ["node", {{ $main | quote }}]
          {{- end }}
          ports:
            {{- if eq .key "gateway" }}
            - name: http
              containerPort: {{ $v.config.gateway.port }}
              protocol: TCP
            {{- end }}
            - name: ops
              containerPort: {{ $v.config.opsPort }}
              protocol: TCP
          {{- with $envFrom }}
          envFrom:
            {{- . | nindent 12 }}
          {{- end }}
          {{- with $env }}
          env:
            {{- . | nindent 12 }}
          {{- end }}
          {{- with $v.probes.startup }}
          {{- if .enabled }}
          startupProbe:
            httpGet:
              path: /livez
              port: ops
            periodSeconds: {{ .periodSeconds }}
            timeoutSeconds: {{ .timeoutSeconds }}
            failureThreshold: {{ .failureThreshold }}
          {{- end }}
          {{- end }}
          {{- with $v.probes.readiness }}
          {{- if .enabled }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: ops
            periodSeconds: {{ .periodSeconds }}
            timeoutSeconds: {{ .timeoutSeconds }}
            failureThreshold: {{ .failureThreshold }}
            successThreshold: {{ .successThreshold }}
          {{- end }}
          {{- end }}
          {{- with $v.probes.liveness }}
          {{- if .enabled }}
          livenessProbe:
            httpGet:
              path: /livez
              port: ops
            periodSeconds: {{ .periodSeconds }}
            timeoutSeconds: {{ .timeoutSeconds }}
            failureThreshold: {{ .failureThreshold }}
          {{- end }}
          {{- end }}
          {{- if gt (int $v.lifecycle.preStopSleepSeconds) 0 }}
          lifecycle:
            preStop:
              # Let endpoints, kube-proxy and load balancers forget this pod before SIGTERM.
              exec:
                command: ["sleep", {{ $v.lifecycle.preStopSleepSeconds | toString | quote }}]
          {{- end }}
          {{- with include "decision-service.resources" (dict "preset" $svc.resourcesPreset "resources" $svc.resources) }}
          resources:
            {{- . | nindent 12 }}
          {{- end }}
          securityContext:
            {{- toYaml $v.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- if $v.nats.tls.enabled }}
            - name: nats-tls
              mountPath: /etc/nats-tls
              readOnly: true
            {{- end }}
            {{- with $v.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- if $v.nats.tls.enabled }}
        - name: nats-tls
          secret:
            secretName: {{ $v.nats.tls.existingSecret }}
        {{- end }}
        {{- with $v.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $svc.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $svc.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if $svc.affinity }}
      affinity:
        {{- toYaml $svc.affinity | nindent 8 }}
      {{- else if eq $v.podAntiAffinityPreset "soft" }}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    {{- include "decision-service.selectorLabels" . | nindent 20 }}
      {{- else if eq $v.podAntiAffinityPreset "hard" }}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels:
                  {{- include "decision-service.selectorLabels" . | nindent 18 }}
      {{- end }}
      {{- with $svc.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
{{- end }}

{{/* ClusterIP Service: `ops` for every service (metrics), `http` for the gateway. */}}
{{- define "decision-service.component.service" -}}
{{- $v := .root.Values }}
{{- $svc := index $v.services .key }}
{{- if $svc.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "decision-service.componentFullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "decision-service.componentLabels" . | nindent 4 }}
  {{- with include "decision-service.annotations" (dict "root" .root "extra" $svc.service.annotations) }}
  {{- . | nindent 2 }}
  {{- end }}
spec:
  type: ClusterIP
  selector:
    {{- include "decision-service.selectorLabels" . | nindent 4 }}
  ports:
    {{- if eq .key "gateway" }}
    - name: http
      port: {{ $v.config.gateway.port }}
      targetPort: http
      protocol: TCP
    {{- end }}
    - name: ops
      port: {{ $v.config.opsPort }}
      targetPort: ops
      protocol: TCP
{{- end }}
{{- end }}

{{- define "decision-service.component.hpa" -}}
{{- $svc := index .root.Values.services .key }}
{{- if and $svc.enabled $svc.autoscaling.enabled }}
{{- $a := $svc.autoscaling }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "decision-service.componentFullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "decision-service.componentLabels" . | nindent 4 }}
  {{- with include "decision-service.annotations" (dict "root" .root) }}
  {{- . | nindent 2 }}
  {{- end }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "decision-service.componentFullname" . }}
  minReplicas: {{ $a.minReplicas }}
  maxReplicas: {{ $a.maxReplicas }}
  metrics:
    {{- if not (kindIs "invalid" $a.targetCPUUtilizationPercentage) }}
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $a.targetCPUUtilizationPercentage }}
    {{- end }}
    {{- if not (kindIs "invalid" $a.targetMemoryUtilizationPercentage) }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ $a.targetMemoryUtilizationPercentage }}
    {{- end }}
  {{- with $a.behavior }}
  behavior:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}

{{- define "decision-service.component.pdb" -}}
{{- $svc := index .root.Values.services .key }}
{{- if and $svc.enabled $svc.pdb.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "decision-service.componentFullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "decision-service.componentLabels" . | nindent 4 }}
  {{- with include "decision-service.annotations" (dict "root" .root) }}
  {{- . | nindent 2 }}
  {{- end }}
spec:
  {{- if not (kindIs "invalid" $svc.pdb.minAvailable) }}
  minAvailable: {{ $svc.pdb.minAvailable }}
  {{- else if not (kindIs "invalid" $svc.pdb.maxUnavailable) }}
  maxUnavailable: {{ $svc.pdb.maxUnavailable }}
  {{- else }}
  maxUnavailable: 1
  {{- end }}
  selector:
    matchLabels:
      {{- include "decision-service.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{- define "decision-service.component.servicemonitor" -}}
{{- $v := .root.Values }}
{{- $svc := index $v.services .key }}
{{- $sm := $v.metrics.serviceMonitor }}
{{- if and $svc.enabled $sm.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "decision-service.componentFullname" . }}
  namespace: {{ default .root.Release.Namespace $sm.namespace }}
  labels:
    {{- include "decision-service.componentLabels" . | nindent 4 }}
    {{- with $sm.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with include "decision-service.annotations" (dict "root" .root) }}
  {{- . | nindent 2 }}
  {{- end }}
spec:
  jobLabel: app.kubernetes.io/component
  namespaceSelector:
    matchNames:
      - {{ .root.Release.Namespace }}
  selector:
    matchLabels:
      {{- include "decision-service.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: ops
      path: /metrics
      interval: {{ $sm.interval }}
      scrapeTimeout: {{ $sm.scrapeTimeout }}
      honorLabels: {{ $sm.honorLabels }}
      {{- with $sm.relabelings }}
      relabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $sm.metricRelabelings }}
      metricRelabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
{{- end }}

{{- define "decision-service.component.networkpolicy" -}}
{{- $v := .root.Values }}
{{- $np := $v.networkPolicy }}
{{- $svc := index $v.services .key }}
{{- if and $svc.enabled $np.enabled }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "decision-service.componentFullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "decision-service.componentLabels" . | nindent 4 }}
  {{- with include "decision-service.annotations" (dict "root" .root) }}
  {{- . | nindent 2 }}
  {{- end }}
spec:
  podSelector:
    matchLabels:
      {{- include "decision-service.selectorLabels" . | nindent 6 }}
  policyTypes:
    - Ingress
    {{- if not $np.allowExternalEgress }}
    - Egress
    {{- end }}
  ingress:
    # ops port: /livez, /readyz, /metrics
    - ports:
        - port: ops
          protocol: TCP
      {{- with $np.metricsFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- if and (eq .key "gateway") (or $np.allowExternal $np.gatewayFrom) }}
    # public HTTP (an empty `from` would admit everyone, so no rule at all when nobody is allowed)
    - ports:
        - port: http
          protocol: TCP
      {{- if not $np.allowExternal }}
      from:
        {{- toYaml $np.gatewayFrom | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- with $np.extraIngress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with $svc.networkPolicy.extraIngress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if not $np.allowExternalEgress }}
  egress:
    # DNS
    - to:
        - namespaceSelector: {}
      ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
    {{- if $np.dependencyPorts }}
    # NATS, PostgreSQL, Redis
    - ports:
        {{- range $np.dependencyPorts }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
      {{- with $np.dependencyTo }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- if has .key $np.internetEgressServices }}
    # the internet (LLM providers, webhook receivers), private ranges excluded
    - to:
        - ipBlock:
            cidr: 0.0.0.0/0
            {{- with $np.internetEgressExcept }}
            except:
              {{- toYaml . | nindent 14 }}
            {{- end }}
    {{- end }}
    {{- with $np.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with $svc.networkPolicy.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
{{- end }}
{{- end }}
