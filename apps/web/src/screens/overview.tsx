import { useEffect, useMemo, useState } from 'react';
import type { DecisionOverview, OverviewPoint, OverviewSlice, ReasonCount } from '@ds/decision-schema';
import { ChartFrame } from '../charts/chart-frame';
import { BarsChart, Datum, LinesChart, Series } from '../charts/charts';
import { useChartColours } from '../charts/colours';
import { useApp } from '../context';
import { api, DecisionDetails } from '../lib/api';
import type { MessageKey } from '../lib/i18n';
import { navigate, useLocation } from '../router';
import { Empty, Loaded, useLoad } from '../ui';

const PRESETS = { hour: 3_600_000, day: 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
type Preset = keyof typeof PRESETS;
type Traffic = 'live' | 'test';

export interface OverviewQuery {
  range: Preset | 'custom';
  from: string;
  to: string;
  traffic: Traffic;
}

/** The view's state lives in the query (`range`, `from`, `to`, `traffic`), so a link shows the same view. */
export function readOverviewQuery(search: string): OverviewQuery {
  const query = new URLSearchParams(search);
  const range = query.get('range');
  const traffic = query.get('traffic') === 'test' ? 'test' : 'live';
  if (range === 'custom' && query.get('from') && query.get('to')) return { range, from: query.get('from')!, to: query.get('to')!, traffic };
  return { range: range !== null && range in PRESETS ? (range as Preset) : 'day', from: '', to: '', traffic };
}

function writeOverviewQuery(path: string, next: OverviewQuery): void {
  const query = new URLSearchParams({ range: next.range, traffic: next.traffic });
  if (next.range === 'custom') {
    query.set('from', next.from);
    query.set('to', next.to);
  }
  navigate(`${path}?${query.toString()}`, true);
}

/** datetime-local values are local wall-clock times; the API takes instants. */
function instant(local: string): string {
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

function localInput(date: Date): string {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
}

function bucketLabel(start: string, bucketSeconds: number, spanMs: number): string {
  const date = new Date(start);
  if (bucketSeconds >= 86_400) return date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return spanMs > 86_400_000 ? `${date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}` : time;
}

function bucketWidth(seconds: number, t: (key: MessageKey, vars?: Record<string, string | number>) => string): string {
  const [n, one, many]: [number, MessageKey, MessageKey] =
    seconds >= 86_400
      ? [seconds / 86_400, 'ov.day', 'ov.days']
      : seconds >= 3_600
        ? [seconds / 3_600, 'ov.hour', 'ov.hours']
        : [seconds / 60, 'ov.minute', 'ov.minutes'];
  return n === 1 ? t(one) : t(many, { n });
}

function percent(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 1000) / 10;
}

function show(value: number | null, suffix = ''): string {
  return value === null ? '—' : `${value.toLocaleString()}${suffix}`;
}

function usd(value: number): string {
  return `$${value.toFixed(value !== 0 && value < 0.01 ? 6 : 2)}`;
}

/** A policy reason by version and rule (the draft's playground runs are version 0), with the rule's condition where known. */
export function policyReasonLabel(
  t: (key: MessageKey, vars?: Record<string, string | number>) => string,
  rule: number,
  version: number | undefined,
  summary: string | undefined,
): string {
  if (version === undefined) return t('ov.reason.policy', { rule });
  // The draft changes after its runs, so its rules are not named by today's conditions.
  if (version === 0) return t('ov.reason.policyDraft', { rule });
  if (summary === undefined) return t('ov.reason.policyUnnamed', { version, rule });
  return t('ov.reason.policyOf', { version, rule, summary });
}

export function Overview({ decision }: { decision: DecisionDetails }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const { path, search } = useLocation();
  const query = readOverviewQuery(search);
  const [customFrom, setCustomFrom] = useState(query.range === 'custom' ? query.from : localInput(new Date(Date.now() - PRESETS['7d'])));
  const [customTo, setCustomTo] = useState(query.range === 'custom' ? query.to : localInput(new Date()));
  const [value, reload] = useLoad(() => {
    const params = new URLSearchParams();
    if (query.range === 'custom') {
      params.set('from', instant(query.from));
      params.set('to', instant(query.to));
    } else {
      const now = Date.now();
      params.set('from', new Date(now - PRESETS[query.range]).toISOString());
      params.set('to', new Date(now).toISOString());
    }
    return api<DecisionOverview>('GET', `/workspaces/${ws}/decisions/${decision.id}/overview?${params.toString()}`);
  }, [ws, decision.id, query.range, query.from, query.to]);

  // The fields show the range drawn: a preset's, as the runner answered it, so "Last hour" never sits over 7 days.
  const shownRange = value.state === 'ready' && query.range !== 'custom' ? value.data : null;
  useEffect(() => {
    if (!shownRange) return;
    setCustomFrom(localInput(new Date(shownRange.from)));
    setCustomTo(localInput(new Date(shownRange.to)));
  }, [shownRange]);

  const presets: Array<[Preset, MessageKey]> = [
    ['hour', 'ov.range.hour'],
    ['day', 'ov.range.day'],
    ['7d', 'ov.range.7d'],
    ['30d', 'ov.range.30d'],
  ];
  return (
    <div className="stack">
      <div className="range-bar">
        <fieldset>
          <legend className="sr-only">{t('ov.range')}</legend>
          {presets.map(([preset, label]) => (
            <button key={preset} type="button" aria-pressed={query.range === preset} onClick={() => writeOverviewQuery(path, { ...query, range: preset })}>
              {t(label)}
            </button>
          ))}
        </fieldset>
        <form
          className="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            writeOverviewQuery(path, { ...query, range: 'custom', from: customFrom, to: customTo });
          }}
        >
          <label>
            {t('ov.from')} <input type="datetime-local" value={customFrom} onChange={(event) => setCustomFrom(event.target.value)} required />
          </label>
          <label>
            {t('ov.to')} <input type="datetime-local" value={customTo} onChange={(event) => setCustomTo(event.target.value)} required />
          </label>
          <button type="submit" aria-pressed={query.range === 'custom'}>
            {t('ov.range.custom')}
          </button>
        </form>
        <fieldset>
          <legend className="sr-only">{t('ov.traffic')}</legend>
          {(['live', 'test'] as const).map((traffic) => (
            <button key={traffic} type="button" aria-pressed={query.traffic === traffic} onClick={() => writeOverviewQuery(path, { ...query, traffic })}>
              {t(traffic === 'live' ? 'ov.live' : 'ov.test')}
            </button>
          ))}
        </fieldset>
      </div>
      <Loaded value={value} reload={reload}>
        {(overview) => <OverviewCharts overview={overview} traffic={query.traffic} />}
      </Loaded>
    </div>
  );
}

function OverviewCharts({ overview, traffic }: { overview: DecisionOverview; traffic: Traffic }) {
  const { t } = useApp();
  const colours = useChartColours();
  const totals: OverviewSlice = overview.totals[traffic];
  const spanMs = new Date(overview.to).getTime() - new Date(overview.from).getTime();
  const [question, setQuestion] = useState<string | null>(null);
  const points = useMemo(
    () => overview.timeline.map((point: OverviewPoint) => ({ label: bucketLabel(point.start, overview.bucket_seconds, spanMs), slice: point[traffic] })),
    [overview, traffic, spanMs],
  );
  const range = `${new Date(overview.from).toLocaleString()} – ${new Date(overview.to).toLocaleString()}`;
  if (totals.runs === 0) return <Empty>{t(traffic === 'live' ? 'ov.noneLive' : 'ov.noneTest', { range })}</Empty>;

  const actions = overview.actions.filter((action) => (totals.by_action[action] ?? 0) > 0);
  const ERRORS = '__errors';
  const runsData: Datum[] = points.map(({ label, slice }) => ({
    label,
    ...Object.fromEntries(actions.map((action) => [action, slice.by_action[action] ?? 0])),
    [ERRORS]: slice.errors,
  }));
  // Errors are red and only errors are: actions take the palette's other colours, in the decision's order of actions.
  const runsSeries: Series[] = [...actions.map((action) => ({ key: action, label: action })), { key: ERRORS, label: t('ov.errors'), colour: colours.error }];
  const rateData: Datum[] = points.map(({ label, slice }) => ({
    label,
    errors: percent(slice.errors, slice.runs),
    fallbacks: percent(slice.fallbacks, slice.runs),
  }));
  const latencyData: Datum[] = points.map(({ label, slice }) => ({ label, p50: slice.latency_p50_ms, p95: slice.latency_p95_ms }));
  const tokenData: Datum[] = points.map(({ label, slice }) => ({ label, tokens: slice.input_tokens }));
  const costData: Datum[] = points.map(({ label, slice }) => ({ label, cost: Math.round(slice.cost_usd * 1e6) / 1e6 }));
  const questions = overview.confidence[traffic];
  const shown = questions.find((one) => one.question === question) ?? questions[0];
  const binLabels = Array.from({ length: 10 }, (_, bin) => `${(bin / 10).toFixed(1)}–${((bin + 1) / 10).toFixed(1)}`);
  const confidenceData: Datum[] = shown ? shown.bins.map((runs, bin) => ({ label: binLabels[bin]!, runs })) : [];
  const reasons = overview.reasons[traffic];
  const reasonLabel = ({ reason: key, version, rule_summary: summary }: ReasonCount): string => {
    const [type, detail] = key.split(/:(.*)/s);
    // Rule numbers mean nothing across versions (rule 1 of v3 may be another rule than v4's): the version names it.
    if (type === 'policy') return policyReasonLabel(t, Number(detail) + 1, version, summary);
    if (type === 'default') return t('ov.reason.default');
    if (type === 'low_confidence') return t('ov.reason.lowConfidence', { question: detail ?? '' });
    if (type === 'other_option') return t('ov.reason.otherOption', { question: detail ?? '' });
    if (type === 'engine_error') return t('ov.reason.engineError', { code: detail ?? '' });
    return key;
  };
  const reasonData: Datum[] = reasons.map((reason) => ({ label: reasonLabel(reason), runs: reason.runs }));
  const bucket = t('ov.bucket');

  return (
    <>
      <dl className="stats" aria-label={t('ov.totals')}>
        <div>
          <dt>{t('ov.runs')}</dt>
          <dd data-testid="ov-runs">{totals.runs.toLocaleString()}</dd>
        </div>
        <div>
          <dt>{t('ov.errorRate')}</dt>
          <dd>{show(percent(totals.errors, totals.runs), ' %')}</dd>
        </div>
        <div>
          <dt>{t('ov.fallbackRate')}</dt>
          <dd>{show(percent(totals.fallbacks, totals.runs), ' %')}</dd>
        </div>
        <div>
          <dt>{t('ov.latency')}</dt>
          <dd>
            {show(totals.latency_p50_ms)} / {show(totals.latency_p95_ms, ' ms')}
          </dd>
        </div>
        <div>
          <dt>{t('ov.inputTokens')}</dt>
          <dd>{totals.input_tokens.toLocaleString()}</dd>
        </div>
        <div>
          <dt>{t('ov.cost')}</dt>
          <dd>{usd(totals.cost_usd)}</dd>
        </div>
      </dl>
      <p className="muted small">{t('ov.span', { range, bucket: bucketWidth(overview.bucket_seconds, t) })}</p>
      {questions.length > 1 && (
        <label className="field">
          {t('ov.question')}
          <select value={shown?.question ?? ''} onChange={(event) => setQuestion(event.target.value)}>
            {questions.map((one) => (
              <option key={one.question} value={one.question}>
                {one.question}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="charts">
        <ChartFrame
          title={t('ov.chart.runs')}
          summary={t('ov.summary.runs', {
            runs: totals.runs,
            errors: totals.errors,
            // No action taken (every run failed) reads "3 runs; 3 errors.", not "3 runs: ; 3 errors.".
            actions: actions.length === 0 ? '' : `: ${actions.map((action) => `${action} ${totals.by_action[action]}`).join(', ')}`,
          })}
          table={{
            columns: [bucket, ...runsSeries.map((one) => one.label)],
            rows: runsData.map((row) => [row.label!, ...runsSeries.map((one) => row[one.key] ?? 0)]),
          }}
        >
          <BarsChart data={runsData} categoryKey="label" series={runsSeries} stacked />
        </ChartFrame>
        <ChartFrame
          title={t('ov.chart.rates')}
          summary={t('ov.summary.rates', {
            errors: show(percent(totals.errors, totals.runs), ' %'),
            fallbacks: show(percent(totals.fallbacks, totals.runs), ' %'),
          })}
          table={{
            columns: [bucket, t('ov.errorRate'), t('ov.fallbackRate')],
            rows: rateData.map((row) => [row.label!, show(row.errors as number | null, ' %'), show(row.fallbacks as number | null, ' %')]),
          }}
        >
          <LinesChart
            data={rateData}
            categoryKey="label"
            unit=" %"
            valueAxis={{ minSpan: 10, integer: false }}
            series={[
              { key: 'errors', label: t('ov.errorRate'), colour: colours.error },
              { key: 'fallbacks', label: t('ov.fallbackRate'), colour: colours.warn },
            ]}
          />
        </ChartFrame>
        <ChartFrame
          title={t('ov.chart.latency')}
          summary={t('ov.summary.latency', { p50: show(totals.latency_p50_ms, ' ms'), p95: show(totals.latency_p95_ms, ' ms') })}
          table={{
            columns: [bucket, 'p50 (ms)', 'p95 (ms)'],
            rows: latencyData.map((row) => [row.label!, show(row.p50 as number | null), show(row.p95 as number | null)]),
          }}
        >
          <LinesChart
            data={latencyData}
            categoryKey="label"
            unit=" ms"
            valueAxis={{ minSpan: 10 }}
            series={[
              { key: 'p50', label: 'p50' },
              { key: 'p95', label: 'p95' },
            ]}
          />
        </ChartFrame>
        <ChartFrame
          title={t('ov.chart.tokens')}
          summary={t('ov.summary.tokens', { tokens: totals.input_tokens.toLocaleString() })}
          table={{ columns: [bucket, t('ov.inputTokens')], rows: tokenData.map((row) => [row.label!, row.tokens!]) }}
        >
          <BarsChart data={tokenData} categoryKey="label" series={[{ key: 'tokens', label: t('ov.inputTokens') }]} />
        </ChartFrame>
        <ChartFrame
          title={t('ov.chart.cost')}
          summary={t('ov.summary.cost', { cost: usd(totals.cost_usd) })}
          table={{ columns: [bucket, t('ov.cost')], rows: costData.map((row) => [row.label!, usd(row.cost as number)]) }}
        >
          <LinesChart
            data={costData}
            categoryKey="label"
            unit=" USD"
            valueAxis={{ minSpan: 0.001, integer: false }}
            series={[{ key: 'cost', label: t('ov.cost') }]}
          />
        </ChartFrame>
        {shown && (
          <ChartFrame
            title={t('ov.chart.confidence', { question: shown.question })}
            summary={t('ov.summary.confidence', { question: shown.question, runs: shown.bins.reduce((a, b) => a + b, 0) })}
            table={{ columns: [t('ov.confidence'), t('ov.runs')], rows: confidenceData.map((row) => [row.label!, row.runs!]) }}
          >
            <BarsChart data={confidenceData} categoryKey="label" series={[{ key: 'runs', label: t('ov.runs') }]} />
          </ChartFrame>
        )}
        <ChartFrame
          title={t('ov.chart.reasons')}
          summary={reasons.length === 0 ? t('ov.summary.noReasons') : t('ov.summary.reasons', { reason: reasonData[0]!.label!, runs: reasons[0]!.runs })}
          table={{ columns: [t('ov.reason'), t('ov.runs')], rows: reasonData.map((row) => [row.label!, row.runs!]) }}
        >
          <BarsChart data={reasonData} categoryKey="label" series={[{ key: 'runs', label: t('ov.runs') }]} vertical />
        </ChartFrame>
      </div>
    </>
  );
}
