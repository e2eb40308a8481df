import { useEffect, useId, useState } from 'react';
import type { AuditReport, QualityReport, QuestionQuality } from '@ds/decision-schema';
import { ChartFrame } from '../charts/chart-frame';
import { BarsChart, Curve, CurvesChart, Datum } from '../charts/charts';
import { may, useApp } from '../context';
import { api, DecisionDetails } from '../lib/api';
import {
  binLabel,
  dayAfter,
  openingVersion,
  VersionOutcomes,
  percent,
  reliabilityPoints,
  score,
  Source,
  sourcesOf,
  thresholdAt,
  thresholdCurves,
} from '../lib/quality';
import { Link, navigate, useLocation } from '../router';
import { Empty, ErrorBox, Loaded, useAction, useLoad } from '../ui';
import { DataTable } from '../components/data-table';
import { AuditView } from './quality-audit';

type Report = QualityReport & {
  decision_id: string;
  version: number;
  from: string | null;
  to: string | null;
  /** Versions whose live runs have outcomes, newest first (whatever the range). */
  outcomes_by_version?: VersionOutcomes[];
  /** Audited figures; null for a version that sends no run to review. */
  audit?: AuditReport | null;
};

interface FittedQuestion {
  question: string;
  source: Source;
  outcomes: number;
  method: string;
  ece_before: number | null;
  ece_after: number | null;
}

interface CalibrationFit {
  version: number;
  revision: number;
  fitted: FittedQuestion[];
  not_fitted: Array<{ question: string; source: Source; outcomes: number; reason: 'not_enough_outcomes' | 'changed_in_draft'; needed?: number }>;
}

interface QualityQuery {
  version: number | null;
  from: string;
  to: string;
}

/** The version and dates live in the query, so a link shows the same report. */
function readQualityQuery(search: string): QualityQuery {
  const query = new URLSearchParams(search);
  const version = Number(query.get('version'));
  return { version: Number.isInteger(version) && version > 0 ? version : null, from: query.get('from') ?? '', to: query.get('to') ?? '' };
}

function writeQualityQuery(path: string, next: QualityQuery): void {
  const query = new URLSearchParams();
  if (next.version !== null) query.set('version', String(next.version));
  if (next.from) query.set('from', next.from);
  if (next.to) query.set('to', next.to);
  const text = query.toString();
  navigate(text ? `${path}?${text}` : path, true);
}

export function Quality({ decision, onDraftChanged }: { decision: DecisionDetails; onDraftChanged: () => void }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const { path, search } = useLocation();
  const query = readQualityQuery(search);
  const version = query.version ?? decision.active_version;
  const [from, setFrom] = useState(query.from);
  const [to, setTo] = useState(query.to);
  const [value, reload] = useLoad(async () => {
    if (version === null) return null;
    const params = new URLSearchParams({ version: String(version) });
    if (query.from) params.set('from', query.from);
    if (query.to) params.set('to', dayAfter(query.to));
    return api<Report>('GET', `/workspaces/${ws}/decisions/${decision.id}/quality?${params.toString()}`);
  }, [ws, decision.id, version, query.from, query.to]);
  // Opened without a chosen version: on the active one, unless it has no outcomes and another version has.
  const [movedFrom, setMovedFrom] = useState<number | null>(null);
  const loaded = value.state === 'ready' ? value.data : null;
  useEffect(() => {
    if (query.version !== null || !loaded) return;
    const better = openingVersion(loaded.version, loaded.outcomes_by_version ?? []);
    if (better === loaded.version) return;
    setMovedFrom(loaded.version);
    writeQualityQuery(path, { ...query, version: better });
  }, [loaded, query.version]);

  if (version === null) return <Empty>{t('q.notDeployed')}</Empty>;
  const versions = [...decision.versions].sort((a, b) => b - a);
  return (
    <div className="stack">
      <form
        className="range-bar"
        onSubmit={(event) => {
          event.preventDefault();
          writeQualityQuery(path, { version, from, to });
        }}
      >
        <label>
          {t('q.version')}
          <select value={version} onChange={(event) => writeQualityQuery(path, { ...query, version: Number(event.target.value) })}>
            {versions.map((one) => (
              <option key={one} value={one}>
                {t('pg.versionN', { version: one })}
                {one === decision.active_version ? ` (${t('dep.active')})` : ''}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('ov.from')} <input type="date" value={from} onChange={(event) => setFrom(event.target.value)} />
        </label>
        <label>
          {t('ov.to')} <input type="date" value={to} onChange={(event) => setTo(event.target.value)} />
        </label>
        <button type="submit">{t('q.apply')}</button>
      </form>
      {movedFrom !== null && query.version !== null && query.version !== movedFrom && (
        <p className="notice" role="status" data-testid="q-moved">
          {t('q.movedTo', { version: query.version, active: movedFrom })}
        </p>
      )}
      {loaded && <ElsewhereOutcomes report={loaded} onPick={(one) => writeQualityQuery(path, { ...query, version: one })} />}
      <Loaded value={value} reload={reload}>
        {(report) => report && <ReportView report={report} decision={decision} onDraftChanged={onDraftChanged} />}
      </Loaded>
    </div>
  );
}

/** A version without outcomes says which versions have them, each a button opening its report. */
function ElsewhereOutcomes({ report, onPick }: { report: Report; onPick: (version: number) => void }) {
  const { t, locale } = useApp();
  const elsewhere = (report.outcomes_by_version ?? []).filter((entry) => entry.version !== report.version);
  if ((report.outcomes_by_version ?? []).some((entry) => entry.version === report.version) || elsewhere.length === 0) return null;
  return (
    <div className="notice" role="note" data-testid="q-elsewhere">
      <p>{t('q.noneHere', { version: report.version })}</p>
      <ul className="plain-list">
        {elsewhere.map((entry) => (
          <li key={entry.version}>
            <button type="button" className="link" onClick={() => onPick(entry.version)}>
              {t('q.openVersion', { version: entry.version, count: entry.outcomes, outcomes: entry.outcomes.toLocaleString(locale) })}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

function ReportView({ report, decision, onDraftChanged }: { report: Report; decision: DecisionDetails; onDraftChanged: () => void }) {
  const { t } = useApp();
  const labelled = report.questions.some((question) => question.labelled > 0) || report.action.labelled > 0;
  return (
    <>
      <p className="muted small">{t('q.lead', { version: report.version })}</p>
      <dl className="stats" aria-label={t('q.action')}>
        <div>
          <dt>{t('q.actionLabelled')}</dt>
          <dd data-testid="q-action-labelled">{report.action.labelled.toLocaleString()}</dd>
        </div>
        <div>
          <dt>{t('q.actionAgreement')}</dt>
          <dd data-testid="q-action-agreement">{percent(report.action.agreement)}</dd>
        </div>
      </dl>
      {!labelled && <Empty>{t('q.noOutcomes')}</Empty>}
      {report.audit && <AuditView audit={report.audit} version={report.version} />}
      {report.questions.map((question) => (
        <QuestionReport key={question.key} question={question} />
      ))}
      <FitCalibration decision={decision} version={report.version} onDraftChanged={onDraftChanged} />
    </>
  );
}

function sourceName(t: ReturnType<typeof useApp>['t'], source: Source): string {
  return t(source === 'model' ? 'q.source.model' : 'q.source.tokens');
}

function QuestionReport({ question }: { question: QuestionQuality }) {
  const { t } = useApp();
  const titleId = useId();
  const sources = sourcesOf(question.sources);
  const probability = question.kind === 'probability';
  const minConfidence = question.min_confidence;

  const reliability: Curve[] = sources.map(([source, quality]) => ({ key: source, label: sourceName(t, source), points: reliabilityPoints(quality.bins) }));
  const bins = sources[0]![1].bins;
  const histogram: Datum[] = bins.map((bin, index) => ({
    label: binLabel(bin),
    ...Object.fromEntries(sources.map(([source, quality]) => [source, quality.bins[index]!.count])),
  }));
  const thresholdCurvesOf: Curve[] = sources.flatMap(([source, quality]) => {
    const curves = thresholdCurves(quality.thresholds);
    const name = sourceName(t, source);
    return [
      { key: `${source}-coverage`, label: t('q.coverageOf', { source: name }), points: curves.coverage },
      { key: `${source}-accuracy`, label: t('q.keptAccuracyOf', { source: name }), points: curves.accuracy, dashed: true },
    ];
  });
  const current = sources.map(([source, quality]) => [source, thresholdAt(quality.thresholds, minConfidence)] as const);

  return (
    <section className="card stack" aria-labelledby={titleId}>
      <h2 id={titleId}>
        <code>{question.key}</code> <span className="badge">{question.kind}</span>
      </h2>
      <p className="muted small">
        {t('q.labelled', { n: question.labelled })}
        {' · '}
        {minConfidence === null ? t('q.noMinConfidence') : t('q.minConfidence', { value: minConfidence })}
      </p>
      <DataTable
        label={t('q.scoresOf', { question: question.key })}
        cards={false}
        testId={`q-scores-${question.key}`}
        rows={sources}
        rowKey={([source]) => source}
        columns={[
          { key: 'source', header: t('q.source'), rowHeader: true, cell: ([source]) => sourceName(t, source) },
          { key: 'labelled', header: t('q.labelledColumn'), cell: ([, quality]) => quality.labelled.toLocaleString() },
          { key: 'brier', header: t('q.brier'), shown: probability, cell: ([, quality]) => score(quality.brier) },
          { key: 'log-loss', header: t('q.logLoss'), shown: probability, cell: ([, quality]) => score(quality.log_loss) },
          { key: 'accuracy', header: t('q.accuracy'), shown: !probability, cell: ([, quality]) => percent(quality.accuracy) },
          { key: 'ece', header: t('q.ece'), cell: ([, quality]) => score(quality.ece) },
        ]}
      />
      {question.labelled === 0 ? (
        <p className="muted">{t('q.noOutcomesQuestion')}</p>
      ) : (
        <>
          {current.map(([source, row]) =>
            row === null ? null : (
              <p key={source} data-testid={`q-kept-${question.key}-${source}`}>
                {t('q.keeps', {
                  source: sourceName(t, source),
                  value: minConfidence!,
                  coverage: percent(row.coverage),
                  kept: row.kept,
                  accuracy: percent(row.accuracy),
                })}
              </p>
            ),
          )}
          <div className="charts">
            <ChartFrame
              title={t('q.chart.reliability', { question: question.key })}
              summary={[
                t(probability ? 'q.axes.yes' : 'q.axes.top'),
                ...sources.map(([source, quality]) =>
                  t('q.summary.reliability', { source: sourceName(t, source), ece: score(quality.ece), n: quality.labelled }),
                ),
              ].join(' ')}
              table={{
                columns: [
                  t(probability ? 'q.binYes' : 'q.binTop'),
                  ...sources.flatMap(([source]) => [
                    t('q.countOf', { source: sourceName(t, source) }),
                    t('q.meanOf', { source: sourceName(t, source) }),
                    t('q.cameTrueOf', { source: sourceName(t, source) }),
                  ]),
                ],
                rows: bins.map((bin, index) => [
                  binLabel(bin),
                  ...sources.flatMap(([, quality]) => {
                    const own = quality.bins[index]!;
                    return [own.count, score(own.confidence), percent(own.accuracy)];
                  }),
                ]),
              }}
            >
              <CurvesChart curves={reliability} diagonal />
            </ChartFrame>
            <ChartFrame
              title={t('q.chart.histogram', { question: question.key })}
              summary={t('q.summary.histogram', { n: question.labelled })}
              table={{
                columns: [t(probability ? 'q.binYes' : 'q.binTop'), ...sources.map(([source]) => sourceName(t, source))],
                rows: histogram.map((row) => [row.label!, ...sources.map(([source]) => row[source] ?? 0)]),
              }}
            >
              <BarsChart data={histogram} categoryKey="label" series={sources.map(([source]) => ({ key: source, label: sourceName(t, source) }))} />
            </ChartFrame>
            <ChartFrame
              title={t('q.chart.thresholds', { question: question.key })}
              summary={[t('q.summary.thresholds'), ...(minConfidence === null ? [] : [t('q.summary.mark', { value: minConfidence })])].join(' ')}
              table={{
                columns: [
                  t('q.minConfidenceColumn'),
                  ...sources.flatMap(([source]) => [
                    t('q.coverageOf', { source: sourceName(t, source) }),
                    t('q.keptAccuracyOf', { source: sourceName(t, source) }),
                  ]),
                ],
                rows: sources[0]![1].thresholds.map((row, index) => [
                  row.min_confidence.toFixed(2),
                  ...sources.flatMap(([, quality]) => [percent(quality.thresholds[index]!.coverage), percent(quality.thresholds[index]!.accuracy)]),
                ]),
              }}
            >
              <CurvesChart curves={thresholdCurvesOf} marks={minConfidence === null ? [] : [{ x: minConfidence, label: t('q.current') }]} />
            </ChartFrame>
          </div>
        </>
      )}
    </section>
  );
}

function FitCalibration({ decision, version, onDraftChanged }: { decision: DecisionDetails; version: number; onDraftChanged: () => void }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [fit, setFit] = useState<CalibrationFit | null>(null);
  const { busy, error, act } = useAction(onDraftChanged);
  const writer = may(workspace, 'decisions:write');
  const run = () =>
    void act(async () => {
      setFit(null);
      setFit(await api<CalibrationFit>('POST', `/workspaces/${ws}/decisions/${decision.id}/calibration`, { version }));
    });
  return (
    <section className="card stack" aria-labelledby="fit-title">
      <h2 id="fit-title">{t('q.fit.title')}</h2>
      <p>{t('q.fit.lead', { version })}</p>
      <div>
        <button type="button" className="primary" disabled={!writer || busy} onClick={run}>
          {busy ? t('q.fit.busy') : t('q.fit.run', { version })}
        </button>
      </div>
      {!writer && <p className="muted small">{t('error.forbidden')}</p>}
      {error !== null && <ErrorBox error={error} />}
      {fit && (
        <div className="stack" data-testid="q-fit-result">
          <p className="notice" role="status">
            {t(fit.fitted.length > 0 ? 'q.fit.done' : 'q.fit.none', { revision: fit.revision, n: fit.fitted.length })}{' '}
            {fit.fitted.length > 0 && <Link href={`/decisions/${decision.slug}/deploy`}>{t('q.fit.deploy')}</Link>}
          </p>
          {fit.fitted.length > 0 && (
            <DataTable
              label={t('q.fit.fitted')}
              cards={false}
              rows={fit.fitted}
              rowKey={(one) => `${one.question}/${one.source}`}
              columns={[
                { key: 'question', header: t('q.fit.question'), rowHeader: true, cell: (one) => <code>{one.question}</code> },
                { key: 'source', header: t('q.source'), cell: (one) => sourceName(t, one.source) },
                { key: 'outcomes', header: t('q.fit.outcomes'), cell: (one) => one.outcomes.toLocaleString() },
                { key: 'method', header: t('q.fit.method'), cell: (one) => t(`q.method.${one.method}` as 'q.method.temperature') },
                { key: 'before', header: t('q.fit.before'), cell: (one) => score(one.ece_before) },
                { key: 'after', header: t('q.fit.after'), cell: (one) => score(one.ece_after) },
              ]}
            />
          )}
          {fit.not_fitted.length > 0 && (
            <>
              <h3>{t('q.fit.notFitted')}</h3>
              <ul>
                {fit.not_fitted.map((one) => (
                  <li key={`${one.question}/${one.source}`}>
                    <code>{one.question}</code> ({sourceName(t, one.source)}):{' '}
                    {one.reason === 'not_enough_outcomes' ? t('q.fit.tooFew', { n: one.outcomes, needed: one.needed ?? 30 }) : t('q.fit.changed')}
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </section>
  );
}
