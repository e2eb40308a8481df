import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, deployedDecision, newWorkspace, opsPort, runDecision, triageSchema } from './support/api';
import { ROOT } from './support/cluster';

const SERVICES = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner'] as const;
type Service = (typeof SERVICES)[number];
const MONITORING = join(ROOT, 'helm', 'decision-service', 'files', 'monitoring');

/** Metric names of a PromQL expression (label matchers, ranges and strings left out); recording rules' names hold a colon. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/"[^"]*"/g, ' ');
  return (bare.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? []).filter((word) => /^(decision_service_|nodejs_|process_)/.test(word));
}

/** Every query of the shipped dashboards and alerting rules. */
function shippedQueries(): Array<{ where: string; expr: string }> {
  const queries: Array<{ where: string; expr: string }> = [];
  for (const file of readdirSync(join(MONITORING, 'dashboards')).filter((name) => name.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(join(MONITORING, 'dashboards', file), 'utf8'));
    for (const variable of dashboard.templating.list)
      if (typeof variable.query === 'object') queries.push({ where: `${file} $${variable.name}`, expr: variable.query.query });
    for (const panel of dashboard.panels) for (const target of panel.targets ?? []) queries.push({ where: `${file} "${panel.title}"`, expr: target.expr });
  }
  const rules = readFileSync(join(MONITORING, 'rules.yaml'), 'utf8');
  for (const [, expr] of rules.matchAll(/^ {8}expr: \|\n((?: {10}.*\n)+)/gm)) queries.push({ where: 'rules.yaml', expr: expr! });
  return queries;
}

/** Metric families a /metrics page declares (`# TYPE`), with the series names each one exposes. */
function exposedNames(page: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of page.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/**
 * The dashboards and alerts read only what the services export: after a run on the shared cluster, every
 * metric name in every shipped query is declared by at least one service's /metrics.
 */
describe('monitoring queries against the metrics the services export', () => {
  let pages: Record<Service, string>;
  let workspaceId: string;

  beforeAll(async () => {
    const ws = await newWorkspace();
    workspaceId = ws.workspaceId;
    await deployedDecision(ws, 'scraped-slug', triageSchema());
    expect((await runDecision(ws, 'scraped-slug', { message: 'hello' })).status).toBe(200);
    // Built from one entry per service, so every service has its page.
    pages = Object.fromEntries(
      await Promise.all(
        SERVICES.map(async (service, index) => {
          const page = await call('GET', '/metrics', {}, `http://127.0.0.1:${opsPort(index)}`);
          expect(page.status).toBe(200);
          return [service, page.text] as const;
        }),
      ),
    ) as Record<Service, string>;
  });

  it('finds every metric of every dashboard panel and alerting rule', () => {
    const exported = new Set(Object.values(pages).flatMap((page) => [...exposedNames(page)]));
    const queries = shippedQueries();
    expect(queries.length).toBeGreaterThan(20);
    const missing = queries.flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${where}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('exports the per-service gauges the services dashboard reads from every service', () => {
    for (const service of SERVICES) {
      const names = exposedNames(pages[service]);
      expect({ service, ready: names.has('decision_service_ready'), calls: names.has('decision_service_rpc_calls_in_flight') }).toEqual({
        service,
        ready: true,
        calls: true,
      });
      expect(pages[service]).toMatch(new RegExp(`^decision_service_ready\\{service="${service}"\\} 1$`, 'm'));
    }
    // Only the services that answer NATS requests count the requests they are handling.
    for (const service of SERVICES.filter((name) => name !== 'gateway'))
      expect(exposedNames(pages[service]).has('decision_service_rpc_handling_in_flight')).toBe(true);
  });

  it('reads the JetStream backlogs of deliveries and settlements', () => {
    expect(pages.delivery).toMatch(
      /^decision_service_jetstream_consumer_pending_messages\{stream="DELIVERIES",consumer="delivery-worker",service="delivery"\} \d+$/m,
    );
    expect(pages['billing-ledger']).toMatch(
      /^decision_service_jetstream_consumer_oldest_pending_age_seconds\{stream="SETTLEMENTS",consumer="billing-ledger-settlements",service="billing-ledger"\} [\d.e+-]+$/m,
    );
  });

  it('labels the engine calls by provider and by a model of the price table', () => {
    expect(pages['engine-proxy']).toMatch(
      /^decision_service_engine_attempts_total\{engine="llm",provider="openai",model="sim-",outcome="ok",service="engine-proxy"\} [1-9]/m,
    );
  });

  it('keeps label values bounded: no workspace, decision, execution or request names in any series', () => {
    const values = Object.values(pages).flatMap((page) => [...page.matchAll(/="([^"]*)"/g)].map(([, value]) => value!));
    expect(values.length).toBeGreaterThan(100);
    const unbounded = values.filter(
      (value) => value === workspaceId || value.includes('scraped-slug') || /[0-9a-f]{8}-[0-9a-f]{4}-/.test(value) || /^(exec|req|key|usr|dec)_/.test(value),
    );
    expect(unbounded).toEqual([]);
  });
});
