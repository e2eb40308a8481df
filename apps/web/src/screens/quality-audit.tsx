import { useId } from 'react';
import type { AuditedAccuracy, AuditReport, QuestionAudit } from '@ds/decision-schema';
import { ChartFrame } from '../charts/chart-frame';
import { CurvesChart } from '../charts/charts';
import { useApp } from '../context';
import { auditCurves, intervalText, percent } from '../lib/quality';
import { DataTable } from '../components/data-table';

/** The audited figures of a version that sends runs to review (docs/reviews.md). */
export function AuditView({ audit, version }: { audit: AuditReport; version: number }) {
  const { t } = useApp();
  const titleId = useId();
  const sent = audit.reviewed.action + audit.reviewed.low_confidence + audit.reviewed.engine_error;
  const rows: Array<{ key: string; subject: string; figures: AuditedAccuracy }> = [
    { key: '', subject: t('q.audit.actionRow'), figures: audit.action },
    ...audit.questions.map((question) => ({ key: question.key, subject: question.key, figures: question })),
  ];
  return (
    <section className="card stack" aria-labelledby={titleId} data-testid="q-audit">
      <h2 id={titleId}>{t('q.audit.title')}</h2>
      <p className="muted small">{t('q.audit.lead', { version })}</p>
      <dl className="stats">
        <div>
          <dt>{t('q.audit.runs')}</dt>
          <dd>{audit.runs.toLocaleString()}</dd>
        </div>
        <div>
          <dt>{t('q.audit.automation')}</dt>
          <dd data-testid="q-audit-automation">{percent(audit.automation_rate)}</dd>
        </div>
        <div>
          <dt>{t('q.audit.reviewed')}</dt>
          <dd>{sent.toLocaleString()}</dd>
        </div>
        <div>
          <dt>{t('q.audit.audits')}</dt>
          <dd>{t('q.audit.ofDrawn', { resolved: audit.audits_resolved.toLocaleString(), drawn: audit.reviewed.audit.toLocaleString() })}</dd>
        </div>
      </dl>
      {audit.audits_resolved === 0 && <p className="muted">{t('q.audit.none')}</p>}
      <DataTable
        label={t('q.audit.accuracyTable')}
        cards={false}
        testId="q-audit-accuracy"
        rows={rows}
        rowKey={(row) => row.key || '(action)'}
        columns={[
          { key: 'subject', header: t('q.audit.subject'), rowHeader: true, cell: (row) => (row.key ? <code>{row.subject}</code> : row.subject) },
          { key: 'audited', header: t('q.audit.audited'), cell: (row) => row.figures.audited.toLocaleString() },
          { key: 'accuracy', header: t('q.audit.accuracy'), cell: (row) => percent(row.figures.accuracy) },
          { key: 'interval', header: t('q.audit.interval'), cell: (row) => intervalText(row.figures.interval) },
        ]}
      />
      <div className="charts">
        {audit.questions.map((question) => (
          <AuditThresholds key={question.key} question={question} />
        ))}
      </div>
    </section>
  );
}

/** What each minConfidence step of one question would have automated, and how right the audited runs kept were. */
function AuditThresholds({ question }: { question: QuestionAudit }) {
  const { t } = useApp();
  const curves = auditCurves(question.thresholds);
  const current = question.min_confidence;
  const uncovered = question.thresholds.some((row) => !row.covered);
  return (
    <ChartFrame
      title={t('q.audit.chart', { question: question.key })}
      summary={[
        t('q.audit.summary', { question: question.key }),
        ...(uncovered && current !== null ? [t('q.audit.summaryCovered', { value: current })] : []),
      ].join(' ')}
      table={{
        columns: [t('q.minConfidenceColumn'), t('q.audit.automation'), t('q.audit.audited'), t('q.audit.accuracy'), t('q.audit.interval')],
        rows: question.thresholds.map((row) => [
          row.min_confidence.toFixed(2),
          percent(row.automation_rate),
          row.audited,
          row.covered ? percent(row.accuracy) : t('q.audit.notCovered'),
          row.covered ? intervalText(row.interval) : '—',
        ]),
      }}
    >
      <CurvesChart
        curves={[
          { key: 'automation', label: t('q.audit.automationCurve'), points: curves.automation },
          { key: 'accuracy', label: t('q.audit.accuracyCurve'), points: curves.accuracy },
          { key: 'low', label: t('q.audit.lowCurve'), points: curves.low, dashed: true },
          { key: 'high', label: t('q.audit.highCurve'), points: curves.high, dashed: true },
        ]}
        marks={current === null ? [] : [{ x: current, label: t('q.current') }]}
      />
    </ChartFrame>
  );
}
