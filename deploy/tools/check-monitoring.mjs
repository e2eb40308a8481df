#!/usr/bin/env node
// Lints the monitoring files the chart ships (files/monitoring): every dashboard against the Grafana
// dashboard model (the fields Grafana needs to load it: uid, schemaVersion, panels with unique ids on
// the 24-column grid, Prometheus targets on the `datasource` variable, variables declared before use),
// and every alert of rules.yaml for a severity and a runbook link to an existing section of
// docs/runbook.md. Prints the metric names the queries use (test/e2e/monitoring.e2e-spec.ts checks that
// the services export each one).
//
//   node deploy/tools/check-monitoring.mjs
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const monitoring = join(root, 'helm', 'decision-service', 'files', 'monitoring');
const problems = [];

const datasource = z.object({ type: z.literal('prometheus'), uid: z.literal('${datasource}') }).strict();
const target = z.object({ refId: z.string().regex(/^[A-Z]$/), expr: z.string().min(1), legendFormat: z.string(), datasource }).strict();
const gridPos = z
  .object({ x: z.number().int().min(0).max(23), y: z.number().int().min(0), w: z.number().int().min(1).max(24), h: z.number().int().min(1) })
  .strict()
  .refine((g) => g.x + g.w <= 24, 'a panel wider than the 24-column grid');
const row = z.object({ id: z.number().int().positive(), type: z.literal('row'), title: z.string().min(1), collapsed: z.boolean(), gridPos, panels: z.array(z.unknown()), repeat: z.string().optional() }).strict();
const timeseries = z
  .object({
    id: z.number().int().positive(),
    type: z.literal('timeseries'),
    title: z.string().min(1),
    description: z.string(),
    datasource,
    gridPos,
    fieldConfig: z.object({ defaults: z.object({ unit: z.string() }).passthrough(), overrides: z.array(z.unknown()) }).strict(),
    options: z.object({}).passthrough(),
    targets: z.array(target).min(1),
  })
  .strict();
const variable = z
  .object({
    name: z.string().regex(/^[a-z][a-z_]*$/),
    type: z.enum(['datasource', 'query']),
    label: z.string(),
    hide: z.number().int(),
    current: z.object({}).passthrough(),
    refresh: z.number().int(),
    query: z.union([z.string(), z.object({ query: z.string().min(1), refId: z.string() }).strict()]),
    datasource: datasource.optional(),
    definition: z.string().optional(),
    includeAll: z.boolean().optional(),
    allValue: z.string().optional(),
    multi: z.boolean().optional(),
  })
  .strict();
const dashboard = z
  .object({
    uid: z.string().regex(/^[a-z0-9-]{1,40}$/),
    title: z.string().min(1),
    description: z.string(),
    tags: z.array(z.string()),
    timezone: z.string(),
    editable: z.boolean(),
    schemaVersion: z.number().int().min(36),
    version: z.number().int(),
    refresh: z.string(),
    time: z.object({ from: z.string(), to: z.string() }).strict(),
    graphTooltip: z.number().int().min(0).max(2),
    templating: z.object({ list: z.array(variable) }).strict(),
    annotations: z.object({ list: z.array(z.unknown()) }).strict(),
    links: z.array(z.unknown()),
    panels: z.array(z.union([row, timeseries])).min(1),
  })
  .strict();

/** Metric names in a PromQL expression: identifiers outside label matchers that name a series. */
export function metricNames(expr) {
  const withoutMatchers = expr.replace(/\{[^}]*\}/g, ' ').replace(/\[[^\]]*\]/g, ' ').replace(/"[^"]*"/g, ' ');
  const words = withoutMatchers.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return words.filter((word) => /^(decision_service_|nodejs_|process_)/.test(word) || word.includes(':'));
}

function balanced(expr) {
  const pairs = { ')': '(', '}': '{', ']': '[' };
  const stack = [];
  for (const char of expr.replace(/"[^"]*"/g, '')) {
    if ('({['.includes(char)) stack.push(char);
    else if (char in pairs && stack.pop() !== pairs[char]) return false;
  }
  return stack.length === 0;
}

const used = new Set();
const dashboards = readdirSync(join(monitoring, 'dashboards')).filter((file) => file.endsWith('.json'));
if (dashboards.length === 0) problems.push('no dashboards in files/monitoring/dashboards');
const uids = new Set();
for (const file of dashboards) {
  const where = `dashboards/${file}`;
  let model;
  try {
    model = JSON.parse(readFileSync(join(monitoring, 'dashboards', file), 'utf8'));
  } catch (error) {
    problems.push(`${where}: not JSON (${error.message})`);
    continue;
  }
  const parsed = dashboard.safeParse(model);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${where}: ${issue.path.join('.')}: ${issue.message}`);
    continue;
  }
  if (uids.has(model.uid)) problems.push(`${where}: uid ${model.uid} used twice`);
  uids.add(model.uid);
  const variables = new Set(model.templating.list.map((v) => v.name));
  const builtIn = new Set(['__rate_interval', '__interval', '__range']);
  const ids = new Set();
  for (const panel of model.panels) {
    if (ids.has(panel.id)) problems.push(`${where}: panel id ${panel.id} used twice`);
    ids.add(panel.id);
    if (panel.repeat && !variables.has(panel.repeat)) problems.push(`${where}: row "${panel.title}" repeats over undeclared $${panel.repeat}`);
    for (const t of panel.targets ?? []) {
      if (!balanced(t.expr)) problems.push(`${where}: "${panel.title}": unbalanced brackets in ${t.expr}`);
      for (const [, name] of t.expr.matchAll(/\$\{?([a-zA-Z_]+)\}?/g)) {
        if (!variables.has(name) && !builtIn.has(name)) problems.push(`${where}: "${panel.title}" uses undeclared $${name}`);
      }
      for (const name of metricNames(t.expr)) used.add(name);
    }
  }
}

// Rules: promtool checks the syntax and runs the tests; here, what promtool does not know.
const rules = readFileSync(join(monitoring, 'rules.yaml'), 'utf8');
const runbook = readFileSync(join(root, 'docs', 'runbook.md'), 'utf8');
const anchors = new Set([...runbook.matchAll(/^#{2,4} (.+)$/gm)].map(([, heading]) => heading.trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
const alerts = [...rules.matchAll(/^ {6}- alert: (\S+)$/gm)].map((m) => ({ name: m[1], at: m.index }));
const recorded = new Set([...rules.matchAll(/^ {6}- record: (\S+)$/gm)].map((m) => m[1]));
if (alerts.length === 0) problems.push('rules.yaml: no alerts');
alerts.forEach((alert, i) => {
  const body = rules.slice(alert.at, i + 1 < alerts.length ? alerts[i + 1].at : undefined);
  if (!/^ {10}severity: (page|ticket)$/m.test(body)) problems.push(`rules.yaml: ${alert.name}: severity must be page or ticket`);
  const link = /^ {10}runbook_url: \S+#(\S+)$/m.exec(body);
  if (!link) problems.push(`rules.yaml: ${alert.name}: no runbook_url`);
  else if (link[1] !== alert.name.toLowerCase()) problems.push(`rules.yaml: ${alert.name}: runbook anchor #${link[1]} should be #${alert.name.toLowerCase()}`);
  else if (!anchors.has(link[1])) problems.push(`rules.yaml: ${alert.name}: docs/runbook.md has no section "${alert.name}"`);
});
for (const [, expr] of rules.matchAll(/^ {8}expr: \|\n((?: {10}.*\n)+)/gm)) {
  if (!balanced(expr)) problems.push(`rules.yaml: unbalanced brackets in ${expr.trim()}`);
  for (const name of metricNames(expr)) used.add(name);
}
for (const name of used) {
  if (name.includes(':') && !recorded.has(name)) problems.push(`a query uses ${name}, which no recording rule defines`);
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
const exported = [...used].filter((name) => !name.includes(':')).sort();
console.log(`monitoring: ${dashboards.length} dashboards, ${alerts.length} alerts with runbook sections, ${exported.length} metrics: ${exported.join(' ')}`);
