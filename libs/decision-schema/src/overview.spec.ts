import {
  splitPolicyReasons,
  CountRow,
  foldOverview,
  HistogramRow,
  isFallbackReason,
  latencyPercentile,
  LATENCY_BOUNDS_MS,
  parseOverviewRange,
  planOverview,
  reasonKey,
} from './overview';
import { summarizePolicy } from './policy-summary';

const NOW = new Date('2030-06-01T12:34:56Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function plan(spanMs: number, endsAgoMs = 0) {
  const to = new Date(NOW.getTime() - endsAgoMs);
  return planOverview({ from: new Date(to.getTime() - spanMs), to }, NOW);
}

describe('reasonKey', () => {
  it('keys each reason type by what it points at', () => {
    expect(reasonKey({ type: 'policy', rule: 2 })).toBe('policy:2');
    expect(reasonKey({ type: 'low_confidence', question: 'intent', confidence: 0.2, minConfidence: 0.5 })).toBe('low_confidence:intent');
    expect(reasonKey({ type: 'other_option', question: 'topic' })).toBe('other_option:topic');
    expect(reasonKey({ type: 'engine_error', code: 'ENGINE_TIMEOUT' })).toBe('engine_error:ENGINE_TIMEOUT');
    expect(reasonKey({ type: 'default' })).toBe('default');
    expect(reasonKey(null)).toBe('');
    expect(reasonKey('policy')).toBe('');
  });

  it('counts other_option, low_confidence and engine_error as fallbacks, nothing else', () => {
    expect(['other_option:q', 'low_confidence:q', 'engine_error:X'].every(isFallbackReason)).toBe(true);
    expect(['policy:0', 'default', '', 'policy:low_confidence'].some(isFallbackReason)).toBe(false);
  });
});

describe('parseOverviewRange', () => {
  it('defaults to the 24 hours before now', () => {
    expect(parseOverviewRange({}, NOW)).toEqual({ ok: true, range: { from: new Date(NOW.getTime() - DAY), to: NOW } });
  });

  it.each([
    [{ from: 'yesterday' }, '`from` must be an ISO 8601 date or timestamp.', 'from'],
    [{ to: ['2030-01-01T00:00:00Z'] }, '`to` must be an ISO 8601 date or timestamp.', 'to'],
    [{ from: '2030-02-30T00:00:00Z' }, '`from` must be an ISO 8601 date or timestamp.', 'from'],
    [{ to: '2030-06-01T24:00:00Z' }, '`to` must be an ISO 8601 date or timestamp.', 'to'],
    [{ from: '2030-05-31 12:00:00' }, '`from` must be an ISO 8601 date or timestamp.', 'from'],
    [{ from: '2030-06-01T00:00:00Z', to: '2030-06-01T00:00:00Z' }, '`from` must be before `to`.', 'from'],
    [{ from: '2030-01-01T00:00:00Z', to: '2030-06-01T00:00:00Z' }, 'A range covers at most 70 days.', 'from'],
  ])('refuses %j, naming the parameter', (query, message, path) => {
    const checked = parseOverviewRange(query, NOW);
    expect(checked).toMatchObject({ ok: false, message });
    expect(checked.ok === false && checked.issues.map((issue) => issue.path)).toEqual([path]);
  });

  it('reads dates and timestamps with offsets', () => {
    expect(parseOverviewRange({ from: '2030-05-31', to: '2030-06-01T02:00:00+02:00' }, NOW)).toEqual({
      ok: true,
      range: { from: new Date('2030-05-31T00:00:00Z'), to: new Date('2030-06-01T00:00:00Z') },
    });
  });
});

describe('planOverview', () => {
  it.each([
    [HOUR, 60, 60],
    [6 * HOUR, 300, 60],
    [12 * HOUR, 900, 60],
    [DAY, 3600, 3600],
    [7 * DAY, 10800, 3600],
    [30 * DAY, 86400, 86400],
    [70 * DAY, 86400, 86400],
  ])('a range of %i ms gets %i-second buckets from %i-second rollups', (span, bucket, grain) => {
    const planned = plan(span);
    expect(planned.bucketSeconds).toBe(bucket);
    expect(planned.grainSeconds).toBe(grain);
    expect((planned.to.getTime() - planned.from.getTime()) / 1000 / bucket).toBeLessThanOrEqual(73);
  });

  it('widens the range to whole buckets', () => {
    const planned = plan(HOUR);
    expect(planned.from.toISOString()).toBe('2030-06-01T11:34:00.000Z');
    expect(planned.to.toISOString()).toBe('2030-06-01T12:35:00.000Z');
  });

  it('reads hour rollups (hour buckets) once minute rollups no longer cover the range', () => {
    const planned = plan(HOUR, 3 * DAY);
    expect(planned).toMatchObject({ bucketSeconds: 3600, grainSeconds: 3600 });
  });
});

describe('latencyPercentile', () => {
  it('interpolates inside the bin the rank falls in', () => {
    // bin 7 is [100, 150): 10 runs; bin 8 is [150, 200): 10 runs.
    const bins = new Map([
      [7, 10],
      [8, 10],
    ]);
    expect(latencyPercentile(bins, 0.5)).toBe(150);
    expect(latencyPercentile(bins, 0.25)).toBe(125);
    expect(latencyPercentile(bins, 0.95)).toBe(195);
  });

  it('answers null without runs and the lower bound past the last bound', () => {
    expect(latencyPercentile(new Map(), 0.5)).toBeNull();
    expect(latencyPercentile(new Map([[LATENCY_BOUNDS_MS.length, 3]]), 0.95)).toBe(60000);
  });
});

describe('foldOverview', () => {
  const planned = planOverview({ from: new Date('2030-06-01T10:00:00Z'), to: new Date('2030-06-01T12:00:00Z') }, NOW);
  const t = (iso: string) => new Date(iso).getTime() / 1000;
  const row = (over: Partial<CountRow>): CountRow => ({
    t: t('2030-06-01T10:00:00Z'),
    livemode: true,
    status: 'success',
    action: 'continue',
    reason: 'default',
    runs: 1,
    inputTokens: 10,
    outputTokens: 1,
    costUsd: 0.001,
    ...over,
  });
  const counts: CountRow[] = [
    row({ runs: 4 }),
    row({ action: 'block', reason: 'policy:0', runs: 2, t: t('2030-06-01T10:01:00Z') }),
    row({ action: 'escalate', reason: 'low_confidence:intent', runs: 3, t: t('2030-06-01T11:59:00Z') }),
    row({ status: 'error', action: '', reason: '', runs: 5, inputTokens: 0, outputTokens: 0, costUsd: 0 }),
    row({ livemode: false, action: 'fallback', reason: 'engine_error:ENGINE_TIMEOUT', runs: 7 }),
    row({ runs: 100, t: t('2030-06-01T09:00:00Z') }),
  ];
  const histograms: HistogramRow[] = [
    { t: t('2030-06-01T10:00:00Z'), livemode: true, metric: 'latency', question: '', bin: 7, runs: 6 },
    { t: t('2030-06-01T11:59:00Z'), livemode: true, metric: 'latency', question: '', bin: 8, runs: 3 },
    { t: t('2030-06-01T10:00:00Z'), livemode: true, metric: 'confidence', question: 'intent', bin: 9, runs: 6 },
    { t: t('2030-06-01T11:59:00Z'), livemode: true, metric: 'confidence', question: 'intent', bin: 1, runs: 3 },
    { t: t('2030-06-01T10:00:00Z'), livemode: false, metric: 'confidence', question: 'topic', bin: 4, runs: 7 },
  ];
  const overview = foldOverview('dec_1', planned, counts, histograms);

  it('has every bucket of the range, idle ones at zero', () => {
    expect(overview.bucket_seconds).toBe(300);
    expect(overview.timeline).toHaveLength(24);
    expect(overview.timeline[0]!.start).toBe('2030-06-01T10:00:00.000Z');
    expect(overview.timeline[5]!.live.runs).toBe(0);
  });

  it('counts runs by action, errors and fallbacks, live and test apart, ignoring rows outside the range', () => {
    expect(overview.totals.live).toMatchObject({ runs: 14, errors: 5, fallbacks: 3, by_action: { continue: 4, block: 2, escalate: 3 } });
    expect(overview.totals.test).toMatchObject({ runs: 7, errors: 0, fallbacks: 7, by_action: { fallback: 7 } });
    expect(overview.timeline[0]!.live).toMatchObject({ runs: 11, errors: 5, by_action: { continue: 4, block: 2 } });
    expect(overview.timeline[23]!.live).toMatchObject({ runs: 3, fallbacks: 3 });
    expect(overview.actions).toEqual(['continue', 'block', 'escalate', 'fallback']);
    expect(overview.totals.live.input_tokens).toBe(30);
  });

  it('reads latency percentiles per bucket and over the range', () => {
    expect(overview.timeline[0]!.live.latency_p50_ms).toBe(125);
    expect(overview.timeline[23]!.live.latency_p50_ms).toBe(175);
    expect(overview.totals.live.latency_p95_ms).toBe(193);
    expect(overview.totals.test.latency_p50_ms).toBeNull();
  });

  it('sums confidence bins per question and lists the top reasons', () => {
    expect(overview.confidence.live).toEqual([{ question: 'intent', bins: [0, 3, 0, 0, 0, 0, 0, 0, 0, 6] }]);
    expect(overview.confidence.test).toEqual([{ question: 'topic', bins: [0, 0, 0, 0, 7, 0, 0, 0, 0, 0] }]);
    expect(overview.reasons.live).toEqual([
      { reason: 'default', runs: 4 },
      { reason: 'low_confidence:intent', runs: 3 },
      { reason: 'policy:0', runs: 2 },
    ]);
  });
});

describe('splitPolicyReasons', () => {
  it('counts a rule apart per version, and keeps runs no rule rollup covers as one entry without a version', () => {
    const counted = new Map([
      ['policy:0', 12],
      ['default', 5],
    ]);
    expect(
      splitPolicyReasons(counted, [
        { livemode: true, version: 3, rule: 0, runs: 4 },
        { livemode: true, version: 4, rule: 0, runs: 6 },
      ]),
    ).toEqual([
      { reason: 'policy:0', runs: 6, version: 4 },
      { reason: 'policy:0', runs: 4, version: 3 },
      { reason: 'policy:0', runs: 2 },
      { reason: 'default', runs: 5 },
    ]);
  });

  it('never counts more per version than the reason counted (a straddling bucket), and leaves other reasons alone', () => {
    expect(splitPolicyReasons(new Map([['policy:1', 3]]), [{ livemode: true, version: 2, rule: 1, runs: 5 }])).toEqual([
      { reason: 'policy:1', runs: 3, version: 2 },
    ]);
    expect(splitPolicyReasons(new Map([['policy:1', 3]]), [])).toEqual([{ reason: 'policy:1', runs: 3 }]);
  });
});

describe('summarizePolicy', () => {
  it('names a rule by its conditions and action, in the schema terms', () => {
    expect(summarizePolicy({ when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' }, and: [], action: 'block' })).toBe(
      'intent = refund → block',
    );
    expect(
      summarizePolicy({
        when: { on: 'score', question: 'urgency', op: 'gte', value: 3 },
        and: [
          { on: 'confidence', question: 'urgency', op: 'lt', value: 0.6 },
          { on: 'composite', composite: 'risk', op: 'neq', value: 0 },
        ],
        action: 'escalate',
      }),
    ).toBe('score(urgency) ≥ 3 and confidence(urgency) < 0.6 and risk ≠ 0 → escalate');
  });
});
