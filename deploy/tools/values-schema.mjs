#!/usr/bin/env node
// Generates helm/decision-service/values.schema.json (JSON Schema draft-07, which every Helm 3/4
// validates). The six services share one definition, so writing the schema as code keeps them
// identical; the JSON file is committed because Helm reads it from the chart.
//
//   node deploy/tools/values-schema.mjs           write the schema
//   node deploy/tools/values-schema.mjs --check   exit 1 when the committed schema is stale
//
// Only Node built-ins. Keep in step with values.yaml: `helm lint` validates values.yaml against
// this schema (additionalProperties: false catches keys missing here), and
// deploy/tools/check-values-docs.mjs checks that every value is documented.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const target = join(here, '..', '..', 'helm', 'decision-service', 'values.schema.json');

const SERVICES = ['gateway', 'decisionRunner', 'engineProxy', 'delivery', 'billingLedger', 'partner'];

// ---- building blocks -----------------------------------------------------------------------------
const ref = (name) => ({ $ref: `#/definitions/${name}` });
const str = (description, extra = {}) => ({ type: 'string', description, ...extra });
const bool = (description) => ({ type: 'boolean', description });
const int = (description, extra = {}) => ({ type: 'integer', description, ...extra });
const obj = (properties, description, extra = {}) => ({
  type: 'object',
  ...(description ? { description } : {}),
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
  ...extra,
});
// Objects whose keys are all optional (partial overrides, Kubernetes passthroughs with known keys).
const partial = (properties, description, extra = {}) => ({
  type: 'object',
  ...(description ? { description } : {}),
  additionalProperties: false,
  properties,
  ...extra,
});
const urlOrEmpty = (schemes, description) =>
  str(description, { pattern: `^$|^(${schemes.join('|')})://\\S+$` });

const definitions = {
  labels: {
    type: 'object',
    description: 'Kubernetes labels or annotations',
    additionalProperties: { type: 'string' },
  },
  k8sObject: { type: 'object', description: 'A Kubernetes object passed through as is' },
  k8sList: { type: 'array', description: 'A list of Kubernetes objects passed through as is', items: { type: 'object' } },
  quantity: {
    description: 'A Kubernetes quantity, e.g. 250m, 1, 512Mi',
    type: ['string', 'number'],
    pattern: '^[0-9]+(\\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$',
  },
  resources: partial(
    {
      requests: { type: 'object', additionalProperties: ref('quantity') },
      limits: { type: 'object', additionalProperties: ref('quantity') },
      claims: ref('k8sList'),
    },
    'Container resources; when not empty, replaces the preset',
  ),
  resourcesPreset: {
    type: 'string',
    description: 'Resources preset (requests + memory limit, no CPU limit)',
    enum: ['none', 'nano', 'micro', 'small', 'medium', 'large', 'xlarge'],
  },
  intOrPercentOrNull: {
    description: 'A count, a percentage such as "50%", or null',
    oneOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '^[0-9]+%$' }, { type: 'null' }],
  },
  nullablePositiveInt: { type: ['integer', 'null'], minimum: 1 },
  percentOrNull: { type: ['integer', 'null'], minimum: 1, maximum: 1000 },
  secretKey: { type: 'string', minLength: 1, pattern: '^[-._a-zA-Z0-9]+$', description: 'Key in the Secret' },
  secretName: {
    type: 'string',
    pattern: '^$|^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
    maxLength: 253,
    description: 'Name of an existing Secret in the release namespace (empty: none)',
  },
  secretValue: obj(
    {
      value: str('Inline value, stored in the chart Secret'),
      existingSecret: ref('secretName'),
      existingSecretKey: ref('secretKey'),
    },
    'A secret value given inline or read from an existing Secret (which wins)',
  ),
  envName: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
  duration: { type: 'string', pattern: '^([0-9]+(ms|s|m|h|d|w|y))+$' },
  port: { type: 'integer', minimum: 1, maximum: 65535 },
  image: partial(
    {
      registry: str('Registry override (empty: image.registry)'),
      repository: str('Repository override (empty: image.repository)'),
      tag: { type: ['string', 'number'], description: 'Tag override (empty: image.tag)' },
      digest: str('Digest override (empty: image.digest)', { pattern: '^$|^sha256:[a-f0-9]{64}$' }),
    },
    'Per-service image override',
  ),
  service: obj(
    {
      enabled: bool('Deploy this service'),
      replicaCount: int('Replicas when autoscaling is off', { minimum: 0 }),
      image: ref('image'),
      args: { type: 'array', items: { type: 'string' }, description: 'Container args (empty: node /app/dist/apps/<service>/src/main.js)' },
      resourcesPreset: ref('resourcesPreset'),
      resources: ref('resources'),
      shutdownGraceMs: { type: ['integer', 'null'], minimum: 0, description: 'SHUTDOWN_GRACE_MS override' },
      terminationGracePeriodSeconds: { type: ['integer', 'null'], minimum: 1, description: 'Grace period override' },
      env: {
        type: 'object',
        description: 'Extra plain environment variables (NAME: value)',
        propertyNames: ref('envName'),
        additionalProperties: { type: ['string', 'number', 'boolean'] },
      },
      extraEnv: {
        type: 'array',
        description: 'Extra EnvVar entries',
        items: { type: 'object', required: ['name'], properties: { name: ref('envName') } },
      },
      extraEnvFrom: ref('k8sList'),
      podAnnotations: ref('labels'),
      podLabels: ref('labels'),
      nodeSelector: ref('labels'),
      tolerations: ref('k8sList'),
      affinity: ref('k8sObject'),
      topologySpreadConstraints: ref('k8sList'),
      priorityClassName: str('PriorityClass name'),
      service: obj({ annotations: ref('labels') }),
      autoscaling: obj({
        enabled: bool('Create a HorizontalPodAutoscaler'),
        minReplicas: int('Minimum replicas', { minimum: 1 }),
        maxReplicas: int('Maximum replicas', { minimum: 1 }),
        targetCPUUtilizationPercentage: ref('percentOrNull'),
        targetMemoryUtilizationPercentage: ref('percentOrNull'),
        behavior: ref('k8sObject'),
      }),
      pdb: obj({
        enabled: bool('Create a PodDisruptionBudget'),
        minAvailable: ref('intOrPercentOrNull'),
        maxUnavailable: ref('intOrPercentOrNull'),
      }),
      networkPolicy: obj({ extraIngress: ref('k8sList'), extraEgress: ref('k8sList') }),
    },
    'One service (all six share this shape)',
  ),
};

const probe = (withSuccess) =>
  obj({
    enabled: bool('Enable the probe'),
    periodSeconds: int('Seconds between checks', { minimum: 1 }),
    timeoutSeconds: int('Timeout of one check', { minimum: 1 }),
    failureThreshold: int('Failures before acting', { minimum: 1 }),
    ...(withSuccess ? { successThreshold: int('Successes before ready again', { minimum: 1 }) } : {}),
  });

const schema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://example.invalid/decision-service/values.schema.json',
  title: 'decision-service chart values',
  description: 'Generated by deploy/tools/values-schema.mjs; edit that file, not this one.',
  type: 'object',
  additionalProperties: false,
  required: [
    'global', 'image', 'nats', 'database', 'redis', 'config', 'serviceAccount', 'podSecurityContext',
    'containerSecurityContext', 'probes', 'lifecycle', 'migrations', 'metrics', 'keda', 'ingress', 'networkPolicy', 'services',
  ],
  properties: {
    global: obj({
      imageRegistry: str('Registry for every image of the chart'),
      imagePullSecrets: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Names of image pull Secrets' },
    }),
    nameOverride: str('Replaces the chart name in resource names', { maxLength: 40 }),
    fullnameOverride: str('Replaces the resource name prefix', { maxLength: 40 }),
    commonLabels: ref('labels'),
    commonAnnotations: ref('labels'),
    image: obj({
      registry: str('Image registry'),
      repository: str('Image repository', { minLength: 1 }),
      tag: { type: ['string', 'number'], description: 'Image tag (empty: appVersion)' },
      digest: str('Image digest', { pattern: '^$|^sha256:[a-f0-9]{64}$' }),
      pullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
    }),
    nats: obj({
      url: urlOrEmpty(['nats', 'tls', 'ws', 'wss'], 'NATS URL (comma-separated list allowed)'),
      existingSecret: ref('secretName'),
      existingSecretKey: ref('secretKey'),
      auth: obj({
        enabled: bool('One NATS user per service, limited to its subjects'),
        existingSecret: ref('secretName'),
      }),
      tls: obj({
        enabled: bool('Connect to NATS over TLS'),
        existingSecret: ref('secretName'),
        clientCertificate: bool('Present tls.crt/tls.key for mutual TLS'),
      }),
    }),
    database: obj({
      url: urlOrEmpty(['postgres', 'postgresql'], 'PostgreSQL URL'),
      existingSecret: ref('secretName'),
      existingSecretKey: ref('secretKey'),
    }),
    redis: obj({
      url: urlOrEmpty(['redis', 'rediss'], 'Redis URL'),
      existingSecret: ref('secretName'),
      existingSecretKey: ref('secretKey'),
    }),
    config: obj({
      logLevel: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
      tracing: obj({ otlpEndpoint: urlOrEmpty(['http', 'https'], 'OTEL_EXPORTER_OTLP_ENDPOINT') }),
      opsPort: ref('port'),
      shutdownGraceMs: int('SHUTDOWN_GRACE_MS', { minimum: 0 }),
      gateway: obj({
        port: ref('port'),
        baseUrl: urlOrEmpty(['http', 'https'], 'BASE_URL'),
        appUrl: urlOrEmpty(['http', 'https'], 'APP_URL'),
        adminToken: ref('secretValue'),
        smtpUrl: ref('secretValue'),
        mailFrom: str('MAIL_FROM (empty: service default)'),
      }),
      engine: obj({
        default: { type: 'string', enum: ['llm', 'checkpoint'] },
        sharedSlots: ref('nullablePositiveInt'),
        slotQueue: ref('nullablePositiveInt'),
        llm: obj({
          provider: { type: 'string', enum: ['anthropic', 'openai'] },
          baseUrl: urlOrEmpty(['http', 'https'], 'ENGINE_LLM_BASE_URL'),
          model: str('ENGINE_LLM_MODEL'),
          apiKey: ref('secretValue'),
        }),
        credentialsKey: ref('secretValue'),
        checkpoint: obj({
          baseUrl: urlOrEmpty(['http', 'https'], 'ENGINE_CHECKPOINT_BASE_URL'),
          model: str('ENGINE_CHECKPOINT_MODEL'),
        }),
      }),
      delivery: obj({
        allowPrivateTargets: bool('DELIVERY_ALLOW_PRIVATE_TARGETS'),
        retryScale: { type: 'number', exclusiveMinimum: 0, description: 'DELIVERY_RETRY_SCALE' },
        purgeIntervalMs: int('DELIVERY_PURGE_INTERVAL_MS', { minimum: 0, maximum: 86400000 }),
        secretsKey: ref('secretValue'),
      }),
      billing: obj({
        leases: bool('BILLING_LEASES (decision-runner)'),
        moneyLeases: bool('BILLING_MONEY_LEASES (billing-ledger)'),
      }),
      decisionRunner: obj({
        secretsKey: ref('secretValue'),
      }),
    }),
    serviceAccount: obj({
      create: bool('Create the ServiceAccount'),
      name: str('ServiceAccount name'),
      annotations: ref('labels'),
      automountServiceAccountToken: bool('Mount the API token'),
    }),
    podSecurityContext: {
      type: 'object',
      description: 'Pod securityContext (Kubernetes PodSecurityContext)',
      properties: {
        runAsNonRoot: { type: 'boolean' },
        runAsUser: { type: ['integer', 'null'], minimum: 0 },
        runAsGroup: { type: ['integer', 'null'], minimum: 0 },
        fsGroup: { type: ['integer', 'null'], minimum: 0 },
        seccompProfile: { type: 'object' },
      },
    },
    containerSecurityContext: {
      type: 'object',
      description: 'Container securityContext (Kubernetes SecurityContext)',
      properties: {
        allowPrivilegeEscalation: { type: 'boolean' },
        readOnlyRootFilesystem: { type: 'boolean' },
        runAsNonRoot: { type: 'boolean' },
        capabilities: { type: 'object' },
      },
    },
    probes: obj({ startup: probe(false), readiness: probe(true), liveness: probe(false) }),
    lifecycle: obj({
      preStopSleepSeconds: int('preStop sleep (0: no hook)', { minimum: 0, maximum: 300 }),
      terminationGraceMarginSeconds: int('Margin added to the grace period', { minimum: 1 }),
    }),
    podAntiAffinityPreset: { type: 'string', enum: ['none', 'soft', 'hard'] },
    extraVolumes: ref('k8sList'),
    extraVolumeMounts: ref('k8sList'),
    migrations: obj({
      enabled: bool('Run migrations in an init container'),
      resourcesPreset: ref('resourcesPreset'),
      resources: ref('resources'),
    }),
    metrics: obj({
      podAnnotations: bool('Prometheus scrape annotations on pods'),
      serviceMonitor: obj({
        enabled: bool('Create ServiceMonitors'),
        namespace: str('Namespace of the ServiceMonitors'),
        interval: ref('duration'),
        scrapeTimeout: ref('duration'),
        labels: ref('labels'),
        honorLabels: bool('honorLabels'),
        relabelings: ref('k8sList'),
        metricRelabelings: ref('k8sList'),
      }),
      dashboards: obj({
        enabled: bool('Create the dashboard ConfigMaps'),
        namespace: str('Namespace of the dashboard ConfigMaps'),
        labels: ref('labels'),
        annotations: ref('labels'),
      }),
      prometheusRule: obj({
        enabled: bool('Create the PrometheusRule'),
        namespace: str('Namespace of the PrometheusRule'),
        labels: ref('labels'),
        runbookUrl: str('Address of docs/runbook.md', { pattern: '^https?://\\S+$' }),
      }),
    }),
    keda: obj({
      enabled: bool('Create the delivery ScaledObject'),
      minReplicaCount: int('Fewest delivery replicas', { minimum: 0 }),
      maxReplicaCount: int('Most delivery replicas', { minimum: 1 }),
      lagThreshold: int('Target pending deliveries per replica', { minimum: 1 }),
      natsMonitoringEndpoint: str('NATS monitoring host:port', { pattern: '^[A-Za-z0-9.-]+:[0-9]+$' }),
      useHttps: bool('https for the monitoring endpoint'),
      account: str('NATS account', { minLength: 1 }),
      pollingInterval: int('Seconds between checks', { minimum: 1 }),
      cooldownPeriod: int('Seconds before scaling down to the minimum', { minimum: 0 }),
    }),
    ingress: obj({
      enabled: bool('Create the gateway Ingress'),
      className: str('IngressClass name'),
      annotations: ref('labels'),
      hosts: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['paths'],
          properties: {
            host: str('Host name', { pattern: '^$|^(\\*\\.)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' }),
            paths: {
              type: 'array',
              minItems: 1,
              items: obj({
                path: str('Path', { pattern: '^/' }),
                pathType: { type: 'string', enum: ['Prefix', 'Exact', 'ImplementationSpecific'] },
              }),
            },
          },
        },
      },
      tls: {
        type: 'array',
        items: partial({
          secretName: str('TLS Secret name'),
          hosts: { type: 'array', items: { type: 'string' } },
        }),
      },
    }),
    networkPolicy: obj({
      enabled: bool('Create NetworkPolicies'),
      allowExternal: bool('Gateway http from any source'),
      gatewayFrom: ref('k8sList'),
      metricsFrom: ref('k8sList'),
      allowExternalEgress: bool('Allow all egress'),
      dependencyPorts: { type: 'array', items: ref('port') },
      dependencyTo: ref('k8sList'),
      internetEgressServices: { type: 'array', uniqueItems: true, items: { type: 'string', enum: SERVICES } },
      internetEgressExcept: {
        type: 'array',
        items: { type: 'string', pattern: '^[0-9a-fA-F:.]+/[0-9]{1,3}$' },
      },
      extraIngress: ref('k8sList'),
      extraEgress: ref('k8sList'),
    }),
    services: obj(Object.fromEntries(SERVICES.map((s) => [s, ref('service')]))),
  },
  definitions,
};

const text = JSON.stringify(schema, null, 2) + '\n';
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    /* missing: stale */
  }
  if (current !== text) {
    console.error(`${target} is stale: run node deploy/tools/values-schema.mjs`);
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
