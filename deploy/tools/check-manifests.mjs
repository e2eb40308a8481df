#!/usr/bin/env node
// Offline validation of rendered manifests, for what a Kubernetes API server would refuse or a
// controller would silently ignore (no cluster, no network): the API groups and kinds the chart
// renders, object and label names, the fields each kind accepts at the levels the chart fills in,
// container ports, probes and environment, quantities, ConfigMap sizes, and the references between
// objects (selectors that match pods, Services' target ports, HPA and KEDA targets, ServiceMonitor
// ports, PrometheusRule rules).
//
//   node deploy/tools/check-manifests.mjs rendered.yaml [...]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// js-yaml comes with the linting tools (eslint); the chart's manifests are plain YAML 1.2.
const yaml = createRequire(import.meta.url)('js-yaml');

const KINDS = {
  'v1/ConfigMap': ['apiVersion', 'kind', 'metadata', 'data', 'binaryData', 'immutable'],
  'v1/Secret': ['apiVersion', 'kind', 'metadata', 'data', 'stringData', 'type', 'immutable'],
  'v1/Service': ['apiVersion', 'kind', 'metadata', 'spec'],
  'v1/Namespace': ['apiVersion', 'kind', 'metadata', 'spec'],
  'v1/ServiceAccount': ['apiVersion', 'kind', 'metadata', 'automountServiceAccountToken', 'imagePullSecrets', 'secrets'],
  'apps/v1/Deployment': ['apiVersion', 'kind', 'metadata', 'spec'],
  'policy/v1/PodDisruptionBudget': ['apiVersion', 'kind', 'metadata', 'spec'],
  'autoscaling/v2/HorizontalPodAutoscaler': ['apiVersion', 'kind', 'metadata', 'spec'],
  'networking.k8s.io/v1/NetworkPolicy': ['apiVersion', 'kind', 'metadata', 'spec'],
  'networking.k8s.io/v1/Ingress': ['apiVersion', 'kind', 'metadata', 'spec'],
  'monitoring.coreos.com/v1/ServiceMonitor': ['apiVersion', 'kind', 'metadata', 'spec'],
  'monitoring.coreos.com/v1/PrometheusRule': ['apiVersion', 'kind', 'metadata', 'spec'],
  'keda.sh/v1alpha1/ScaledObject': ['apiVersion', 'kind', 'metadata', 'spec'],
};
const CONTAINER_FIELDS = new Set(['name', 'image', 'imagePullPolicy', 'command', 'args', 'workingDir', 'ports', 'env', 'envFrom', 'resources', 'volumeMounts', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'securityContext', 'terminationMessagePath', 'terminationMessagePolicy', 'stdin', 'tty']);
const POD_FIELDS = new Set(['containers', 'initContainers', 'volumes', 'serviceAccountName', 'automountServiceAccountToken', 'securityContext', 'imagePullSecrets', 'nodeSelector', 'tolerations', 'affinity', 'topologySpreadConstraints', 'priorityClassName', 'terminationGracePeriodSeconds', 'enableServiceLinks', 'hostNetwork', 'dnsPolicy', 'restartPolicy']);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const QUANTITY = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|e[0-9]+)?$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const PORT_NAME = /^(?=.{1,15}$)(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

const problems = [];
const objects = [];
for (const file of process.argv.slice(2)) {
  for (const doc of yaml.loadAll(readFileSync(file, 'utf8'))) if (doc) objects.push({ file, doc });
}
if (objects.length === 0) problems.push('no objects to check');

const where = ({ doc }) => `${doc?.kind ?? '?'} ${doc?.metadata?.name ?? '?'}`;
const fail = (object, message) => problems.push(`${where(object)}: ${message}`);
const matches = (selector, labels) => Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);

function checkMetadata(object) {
  const { metadata } = object.doc;
  if (!metadata || typeof metadata.name !== 'string') return fail(object, 'no metadata.name');
  const limit = object.doc.kind === 'Service' ? 63 : 253;
  if (metadata.name.length > limit || !(object.doc.kind === 'Service' ? DNS_LABEL : DNS_SUBDOMAIN).test(metadata.name)) fail(object, `invalid name "${metadata.name}"`);
  if (metadata.namespace !== undefined && !DNS_LABEL.test(metadata.namespace)) fail(object, `invalid namespace "${metadata.namespace}"`);
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    if (!QUALIFIED_NAME.test(key)) fail(object, `invalid label key "${key}"`);
    if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) fail(object, `invalid value of label ${key}: ${JSON.stringify(value)}`);
  }
  for (const [key, value] of Object.entries(metadata.annotations ?? {})) {
    if (!QUALIFIED_NAME.test(key)) fail(object, `invalid annotation key "${key}"`);
    if (typeof value !== 'string') fail(object, `annotation ${key} is not a string`);
  }
}

function checkResources(object, who, resources = {}) {
  for (const part of ['requests', 'limits']) {
    for (const [name, value] of Object.entries(resources[part] ?? {})) {
      if (!QUANTITY.test(String(value))) fail(object, `${who}: ${part}.${name} is not a quantity (${value})`);
    }
  }
}

function checkPod(object, pod) {
  for (const key of Object.keys(pod)) if (!POD_FIELDS.has(key)) fail(object, `unknown pod field ${key}`);
  const volumes = new Set((pod.volumes ?? []).map((v) => v.name));
  const names = new Set();
  for (const container of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    const who = `container ${container.name}`;
    if (!DNS_LABEL.test(container.name ?? '') || names.has(container.name)) fail(object, `${who}: invalid or repeated name`);
    names.add(container.name);
    for (const key of Object.keys(container)) if (!CONTAINER_FIELDS.has(key)) fail(object, `${who}: unknown field ${key}`);
    if (typeof container.image !== 'string' || container.image === '') fail(object, `${who}: no image`);
    const ports = new Set();
    for (const port of container.ports ?? []) {
      if (!Number.isInteger(port.containerPort) || port.containerPort < 1 || port.containerPort > 65535) fail(object, `${who}: invalid containerPort ${port.containerPort}`);
      if (port.name !== undefined && !PORT_NAME.test(port.name)) fail(object, `${who}: invalid port name ${port.name}`);
      ports.add(port.name);
      ports.add(port.containerPort);
    }
    for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
      const handler = container[probe]?.httpGet ?? container[probe]?.tcpSocket;
      if (handler && !ports.has(handler.port)) fail(object, `${who}: ${probe} on port ${handler.port}, which the container does not declare`);
    }
    for (const env of container.env ?? []) {
      if (!ENV_NAME.test(env.name ?? '')) fail(object, `${who}: invalid env name ${env.name}`);
      if ((env.value !== undefined) === (env.valueFrom !== undefined)) fail(object, `${who}: env ${env.name} needs exactly one of value and valueFrom`);
      if (env.value !== undefined && typeof env.value !== 'string') fail(object, `${who}: env ${env.name} value must be a string`);
    }
    for (const mount of container.volumeMounts ?? []) if (!volumes.has(mount.name)) fail(object, `${who}: mounts undeclared volume ${mount.name}`);
    checkResources(object, who, container.resources);
  }
  if ((pod.containers ?? []).length === 0) fail(object, 'no containers');
}

const byKind = (kind) => objects.filter((o) => o.doc.kind === kind);
for (const object of objects) {
  const { doc } = object;
  const allowed = KINDS[`${doc.apiVersion}/${doc.kind}`];
  if (!allowed) {
    fail(object, `unknown apiVersion/kind ${doc.apiVersion}/${doc.kind}`);
    continue;
  }
  for (const key of Object.keys(doc)) if (!allowed.includes(key)) fail(object, `unknown top-level field ${key}`);
  checkMetadata(object);
  if (doc.kind === 'ConfigMap' || doc.kind === 'Secret') {
    let bytes = 0;
    for (const part of ['data', 'stringData', 'binaryData']) {
      for (const [key, value] of Object.entries(doc[part] ?? {})) {
        if (!CONFIG_KEY.test(key)) fail(object, `invalid ${part} key ${key}`);
        if (typeof value !== 'string') fail(object, `${part}.${key} must be a string`);
        bytes += Buffer.byteLength(String(value));
      }
    }
    if (bytes > 1024 * 1024) fail(object, `${bytes} bytes of data: over the 1 MiB an object may hold`);
  }
  if (doc.kind === 'Deployment') {
    const podLabels = doc.spec?.template?.metadata?.labels;
    if (!doc.spec?.selector?.matchLabels || !matches(doc.spec.selector.matchLabels, podLabels)) fail(object, 'selector does not match the pod template labels');
    checkPod(object, doc.spec?.template?.spec ?? {});
  }
}

const pods = byKind('Deployment').map((d) => ({ name: d.doc.metadata.name, labels: d.doc.spec?.template?.metadata?.labels ?? {}, containers: d.doc.spec?.template?.spec?.containers ?? [], replicas: d.doc.spec?.replicas }));
const selects = (selector) => pods.filter((p) => matches(selector, p.labels));
for (const object of byKind('Service')) {
  const { spec } = object.doc;
  const targets = selects(spec?.selector);
  if (targets.length === 0) fail(object, 'selects no pods of this release');
  for (const port of spec?.ports ?? []) {
    if (!Number.isInteger(port.port) || port.port < 1 || port.port > 65535) fail(object, `invalid port ${port.port}`);
    if (typeof port.targetPort === 'string' && !targets.every((p) => p.containers.some((c) => (c.ports ?? []).some((cp) => cp.name === port.targetPort)))) {
      fail(object, `targetPort ${port.targetPort} is not a named port of the pods it selects`);
    }
  }
}
for (const object of byKind('PodDisruptionBudget')) {
  const { spec } = object.doc;
  if ((spec?.minAvailable === undefined) === (spec?.maxUnavailable === undefined)) fail(object, 'needs exactly one of minAvailable and maxUnavailable');
  if (selects(spec?.selector?.matchLabels).length === 0) fail(object, 'selects no pods of this release');
}
const deploymentNames = new Set(pods.map((p) => p.name));
const hpaTargets = new Set();
for (const object of byKind('HorizontalPodAutoscaler')) {
  const { spec } = object.doc;
  if (spec?.scaleTargetRef?.kind !== 'Deployment' || !deploymentNames.has(spec.scaleTargetRef.name)) fail(object, 'scaleTargetRef names no Deployment of this release');
  hpaTargets.add(spec?.scaleTargetRef?.name);
  if (!(spec?.minReplicas >= 1 && spec.minReplicas <= spec.maxReplicas)) fail(object, 'needs 1 <= minReplicas <= maxReplicas');
  if ((spec?.metrics ?? []).length === 0) fail(object, 'no metrics');
  if (pods.find((p) => p.name === spec?.scaleTargetRef?.name)?.replicas !== undefined) fail(object, 'its Deployment also sets replicas (every apply would fight the HPA)');
}
for (const object of byKind('ScaledObject')) {
  const { spec } = object.doc;
  const target = spec?.scaleTargetRef?.name;
  if (!deploymentNames.has(target)) fail(object, 'scaleTargetRef names no Deployment of this release');
  if (hpaTargets.has(target)) fail(object, 'its Deployment also has an HPA of the chart');
  if (pods.find((p) => p.name === target)?.replicas !== undefined) fail(object, 'its Deployment also sets replicas');
  if (!(spec?.minReplicaCount <= spec?.maxReplicaCount)) fail(object, 'minReplicaCount above maxReplicaCount');
  for (const trigger of spec?.triggers ?? []) {
    if (trigger.type !== 'nats-jetstream') fail(object, `unexpected trigger ${trigger.type}`);
    for (const key of ['natsServerMonitoringEndpoint', 'account', 'stream', 'consumer', 'lagThreshold']) {
      if (typeof trigger.metadata?.[key] !== 'string' || trigger.metadata[key] === '') fail(object, `trigger metadata.${key} must be a non-empty string`);
    }
  }
}
const services = byKind('Service').map((s) => s.doc);
for (const object of byKind('ServiceMonitor')) {
  const { spec } = object.doc;
  const selected = services.filter((s) => matches(spec?.selector?.matchLabels, s.metadata.labels));
  if (selected.length === 0) fail(object, 'selects no Service of this release');
  for (const endpoint of spec?.endpoints ?? []) {
    if (!selected.every((s) => (s.spec?.ports ?? []).some((p) => p.name === endpoint.port))) fail(object, `endpoint port ${endpoint.port} is not a port of the selected Service`);
  }
}
for (const object of byKind('PrometheusRule')) {
  const groups = object.doc.spec?.groups ?? [];
  if (groups.length === 0) fail(object, 'no rule groups');
  for (const group of groups) {
    if (typeof group.name !== 'string' || group.name === '') fail(object, 'a group without a name');
    for (const rule of group.rules ?? []) {
      if ((rule.alert === undefined) === (rule.record === undefined)) fail(object, `group ${group.name}: a rule needs exactly one of alert and record`);
      if (typeof rule.expr !== 'string' || rule.expr.trim() === '') fail(object, `group ${group.name}: ${rule.alert ?? rule.record}: no expr`);
      for (const [key, value] of Object.entries({ ...(rule.labels ?? {}), ...(rule.annotations ?? {}) })) {
        if (typeof value !== 'string') fail(object, `${rule.alert ?? rule.record}: ${key} must be a string`);
      }
    }
  }
}
for (const object of byKind('NetworkPolicy')) {
  const { spec } = object.doc;
  if (!spec?.podSelector) fail(object, 'no podSelector');
  for (const rule of [...(spec?.ingress ?? []), ...(spec?.egress ?? [])]) {
    for (const port of rule.ports ?? []) if (port.protocol && !['TCP', 'UDP', 'SCTP'].includes(port.protocol)) fail(object, `invalid protocol ${port.protocol}`);
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`manifests: ${objects.length} objects valid`);
