import { useEffect, useState, type FormEvent } from 'react';
import type { BreakingChange, ShadowComparison } from '@ds/decision-schema';
import { api, DecisionDetails, DeployedReply, ReviewReply } from '../lib/api';
import { BreakingList } from './changes';
import { useApp } from '../context';
import { Choice, ConfirmDialog, formatDate, Loaded, Outcome, TableWrap, useAction, useLoad } from '../ui';
import { DataTable } from '../components/data-table';

interface ShadowState {
  active_version: number | null;
  shadow: { version: number; rate: number; started_at: string; started_by: { user_id: string; email: string | null } | null } | null;
  comparison: ShadowComparison | null;
}

/** While a shadow runs, its comparison is read again this often. */
const REFRESH_MS = 5_000;

const DRAFT = 'draft';

const percent = (value: number | null) => (value === null ? '–' : `${Math.round(value * 1000) / 10} %`);
const amount = (value: number | null, digits = 0) => (value === null ? '–' : value.toFixed(digits));

/**
 * A candidate version evaluated on a sample of live runs after they answer, compared with the active version as
 * the runs come in; promoted to active or stopped in one step.
 */
export function ShadowPanel({ decision, versions, onChanged }: { decision: DecisionDetails; versions: number[]; onChanged: () => void }) {
  const { t, workspace } = useApp();
  const base = `/workspaces/${workspace!.id}/decisions/${decision.id}/shadow`;
  const [state, reload] = useLoad(() => api<ShadowState>('GET', base), [base, decision.active_version]);
  const running = state.state === 'ready' && state.data.shadow !== null;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [running, reload]);
  const after = () => {
    reload();
    onChanged();
  };
  const { busy, error, act } = useAction(after);
  const [asking, setAsking] = useState<'promote' | 'stop' | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  // What the draft would break, as the service's review of deploying it says.
  const [draftReview] = useLoad(
    () => api<ReviewReply>('GET', `/workspaces/${workspace!.id}/decisions/${decision.id}/review`),
    [workspace!.id, decision.id, decision.revision, decision.active_version],
  );
  const draftBreaking = draftReview.state === 'ready' ? (draftReview.data.review?.breaking ?? []) : [];

  const start = async (version: number | null, rate: number) => {
    setMessage(null);
    await act(() => api<ShadowState>('POST', base, version === null ? { rate } : { rate, version }));
  };
  const promote = async () => {
    const done = await act(() => api<DeployedReply>('POST', `${base}/promote`));
    setAsking(null);
    if (done) setMessage(t('shadow.promoted', { version: done.version }));
  };
  const stop = async () => {
    const done = await act(async () => {
      await api<void>('DELETE', base);
      return true;
    });
    setAsking(null);
    if (done) setMessage(t('shadow.stopped'));
  };

  return (
    <section className="card stack" aria-labelledby="shadow-title">
      <h2 id="shadow-title">{t('shadow.title')}</h2>
      <p className="muted">{t('shadow.intro')}</p>
      <Outcome error={error} message={message} />
      <Loaded value={state} reload={reload}>
        {(data) =>
          data.shadow === null ? (
            <StartForm
              versions={versions.filter((version) => version !== data.active_version)}
              draftBreaking={draftBreaking}
              busy={busy}
              onStart={(version, rate) => void start(version, rate)}
            />
          ) : (
            <>
              <p>
                {t('shadow.running', { version: data.shadow.version, active: data.active_version ?? '–', rate: data.shadow.rate })}{' '}
                <span className="muted small">
                  {t('shadow.since', {
                    date: formatDate(data.shadow.started_at),
                    by: data.shadow.started_by?.email ?? data.shadow.started_by?.user_id ?? t('hist.unknown'),
                  })}
                </span>
              </p>
              <div className="inline-form">
                <RateForm rate={data.shadow.rate} busy={busy} onRate={(rate) => void start(data.shadow!.version, rate)} />
                <button type="button" className="primary" disabled={busy} onClick={() => setAsking('promote')}>
                  {t('shadow.promote')}
                </button>
                <button type="button" className="danger" disabled={busy} onClick={() => setAsking('stop')}>
                  {t('shadow.stop')}
                </button>
              </div>
              {data.comparison && <ComparisonView comparison={data.comparison} active={data.active_version} shadow={data.shadow.version} />}
              {asking === 'promote' && (
                <ConfirmDialog
                  title={t('shadow.promote')}
                  confirmLabel={t('shadow.promote')}
                  busy={busy}
                  onConfirm={() => void promote()}
                  onCancel={() => setAsking(null)}
                >
                  <p>{t('shadow.promoteQuestion', { version: data.shadow.version })}</p>
                </ConfirmDialog>
              )}
              {asking === 'stop' && (
                <ConfirmDialog
                  title={t('shadow.stop')}
                  confirmLabel={t('shadow.stop')}
                  danger
                  busy={busy}
                  onConfirm={() => void stop()}
                  onCancel={() => setAsking(null)}
                >
                  <p>{t('shadow.stopQuestion', { version: data.shadow.version })}</p>
                </ConfirmDialog>
              )}
            </>
          )
        }
      </Loaded>
    </section>
  );
}

function StartForm({
  versions,
  draftBreaking,
  busy,
  onStart,
}: {
  versions: number[];
  /** What the draft breaks for callers against the active version: a shadow of it is fine, promoting it is not. */
  draftBreaking: BreakingChange[];
  busy: boolean;
  onStart: (version: number | null, rate: number) => void;
}) {
  const { t } = useApp();
  const [candidate, setCandidate] = useState<string>(DRAFT);
  const [rate, setRate] = useState(10);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onStart(candidate === DRAFT ? null : Number(candidate), rate);
  };
  return (
    <>
      <form className="inline-form" onSubmit={submit}>
        <Choice
          label={t('shadow.candidate')}
          value={candidate}
          first={{ value: DRAFT, label: t('shadow.draft') }}
          options={versions.map((version) => ({ value: String(version), label: t('pg.versionN', { version }) }))}
          onChange={setCandidate}
        />
        <RateInput rate={rate} onRate={setRate} />
        <button type="submit" className="primary" disabled={busy}>
          {t('shadow.start')}
        </button>
      </form>
      {candidate === DRAFT && draftBreaking.length > 0 && <BreakingList changes={draftBreaking} title="shadow.breaking" lead="shadow.breakingLead" />}
    </>
  );
}

function RateInput({ rate, onRate }: { rate: number; onRate: (rate: number) => void }) {
  const { t } = useApp();
  return (
    <label className="field narrow">
      <span>{t('shadow.rate')}</span>
      <input type="number" min={1} max={100} step={1} required value={rate} onChange={(event) => onRate(Number(event.target.value))} />
    </label>
  );
}

function RateForm({ rate, busy, onRate }: { rate: number; busy: boolean; onRate: (rate: number) => void }) {
  const { t } = useApp();
  const [value, setValue] = useState(rate);
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        onRate(value);
      }}
    >
      <RateInput rate={value} onRate={setValue} />
      <button type="submit" disabled={busy || value === rate}>
        {t('shadow.setRate')}
      </button>
    </form>
  );
}

function ComparisonView({ comparison, active, shadow }: { comparison: ShadowComparison; active: number | null; shadow: number }) {
  const { t } = useApp();
  const liveLabel = t('pg.versionN', { version: active ?? '–' });
  const shadowLabel = t('pg.versionN', { version: shadow });
  const { live, shadow: candidate, accuracy } = comparison;
  return (
    <div className="stack" aria-live="polite">
      <p>
        {t('shadow.samples', { samples: comparison.samples, compared: comparison.compared, errors: comparison.shadow_errors })}{' '}
        <strong>{t('shadow.actionAgreement', { rate: percent(comparison.action.rate) })}</strong>
      </p>
      <TableWrap label={t('shadow.sideBySide')}>
        <table>
          <caption>{t('shadow.sideBySide')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('shadow.figure')}</th>
              <th scope="col">{liveLabel}</th>
              <th scope="col">{shadowLabel}</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">{t('shadow.latencyP50')}</th>
              <td>{amount(live.latency_ms.p50)}</td>
              <td>{amount(candidate.latency_ms.p50)}</td>
            </tr>
            <tr>
              <th scope="row">{t('shadow.latencyP95')}</th>
              <td>{amount(live.latency_ms.p95)}</td>
              <td>{amount(candidate.latency_ms.p95)}</td>
            </tr>
            <tr>
              <th scope="row">{t('shadow.inputTokens')}</th>
              <td>{amount(live.input_tokens, 1)}</td>
              <td>{amount(candidate.input_tokens, 1)}</td>
            </tr>
            <tr>
              <th scope="row">{t('shadow.outputTokens')}</th>
              <td>{amount(live.output_tokens, 1)}</td>
              <td>{amount(candidate.output_tokens, 1)}</td>
            </tr>
            <tr>
              <th scope="row">{t('shadow.actionAccuracy', { labelled: accuracy.action.labelled })}</th>
              <td>{percent(accuracy.action.live)}</td>
              <td>{percent(accuracy.action.shadow)}</td>
            </tr>
          </tbody>
        </table>
      </TableWrap>
      <DataTable
        label={t('shadow.questions')}
        caption="shown"
        cards={false}
        rows={comparison.questions.map((question, i) => ({ ...question, accuracy: accuracy.questions[i]! }))}
        rowKey={(question) => question.key}
        columns={[
          { key: 'question', header: t('shadow.question'), rowHeader: true, cell: (question) => question.key },
          {
            key: 'agreement',
            header: t('shadow.agreement'),
            cell: (question) => (
              <>
                {percent(question.rate)}{' '}
                <span className="muted small">
                  ({question.agreed}/{question.compared})
                </span>
              </>
            ),
          },
          { key: 'live', header: t('shadow.accuracyOf', { version: liveLabel }), cell: (question) => percent(question.accuracy.live) },
          { key: 'shadow', header: t('shadow.accuracyOf', { version: shadowLabel }), cell: (question) => percent(question.accuracy.shadow) },
        ]}
      />
      {comparison.confusion.length > 0 && (
        <DataTable
          label={t('shadow.confusion')}
          caption="shown"
          cards={false}
          rows={comparison.confusion}
          rowKey={(cell) => `${cell.live} ${cell.shadow}`}
          columns={[
            { key: 'live', header: t('shadow.actionOf', { version: liveLabel }), cell: (cell) => cell.live },
            {
              key: 'shadow',
              header: t('shadow.actionOf', { version: shadowLabel }),
              cell: (cell) => (cell.live === cell.shadow ? cell.shadow : <strong>{cell.shadow}</strong>),
            },
            { key: 'runs', header: t('shadow.runs'), cell: (cell) => cell.count },
          ]}
        />
      )}
    </div>
  );
}
