import { useEffect, useId, useState } from 'react';
import { REPLAY_MAX_EXECUTIONS } from '@ds/decision-schema';
import { api, DecisionDetails } from '../lib/api';
import { may, useApp } from '../context';
import { Choice, ErrorBox, formatDate, Loaded, TableWrap, useAction, useLoad } from '../ui';
import { DataTable } from '../components/data-table';

type Answers = Record<string, string | number> | null;

type Comparison = {
  compared: number;
  failed: number;
  action: { agreed: number; agreement: number | null };
  questions: Array<{ key: string; compared: number; agreed: number; agreement: number | null }>;
  confusion: { actions: string[]; counts: number[][] };
  accuracy: { labelled: number; old: number | null; new: number | null };
  /** Absent from servers before reviews. */
  reviewers?: {
    executions: number;
    action: { compared: number; old: number | null; new: number | null };
    questions: Array<{ key: string; compared: number; old: number | null; new: number | null }>;
  };
};

interface Eligible {
  eligible: number;
  without_input: number;
  store_input: boolean;
}

interface ReplayView {
  id: string;
  version: number | null;
  selection: { last: number } | { from: string; to: string };
  status: 'running' | 'completed' | 'cancelled';
  created_at: string;
  finished_at: string | null;
  progress: { total: number; done: number; failed: number; cancelled: number; pending: number; running?: number };
  result: Comparison;
  /** The active version replayed on the same executions; absent from replays started before baselines were kept. */
  baseline?: (Comparison & { version: number; same_as_result: boolean }) | null;
}

interface ReplayedExecution {
  position: number;
  execution_id: string;
  status: 'pending' | 'running' | 'done' | 'failed' | 'cancelled';
  old: { action: string; answers: Answers };
  new: { action: string; answers: Answers } | null;
  error: { code: string; message: string } | null;
}

/** How often a running replay's progress is read again. */
const POLL_MS = 1_500;
/** A selection being typed is counted once it has rested this long. */
const ELIGIBLE_PAUSE_MS = 300;

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);

/** Replays of the draft or a version against the decision's past executions: start one, watch it, read how it compares. */
export function Replay({ decision }: { decision: DecisionDetails }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const base = `/workspaces/${ws}/decisions/${decision.id}/replays`;
  const [replays, reload] = useLoad(() => api<{ data: ReplayView[] }>('GET', base), [base]);
  const [shown, setShown] = useState<string | null>(null);
  // A cancelled replay's calls already in flight still finish and are recorded: keep reading until they have.
  const running = replays.state === 'ready' && replays.data.data.some((replay) => replay.status === 'running' || (replay.progress.running ?? 0) > 0);

  useEffect(() => {
    if (!running) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [running, reload]);

  if (!may(workspace, 'decisions:deploy')) return <p className="muted">{t('error.forbidden')}</p>;
  return (
    <div className="stack">
      <StartReplay
        decision={decision}
        base={base}
        onStarted={(id) => {
          setShown(id);
          reload();
        }}
      />
      <Loaded value={replays} reload={reload}>
        {({ data }) => {
          const current = data.find((replay) => replay.id === shown) ?? data[0];
          return data.length === 0 ? (
            <p className="muted">{t('rpl.none')}</p>
          ) : (
            <>
              {current && <ReplayCard key={current.id} replay={current} base={base} onChanged={reload} />}
              {data.length > 1 && <EarlierReplays replays={data} current={current?.id ?? null} onShow={setShown} />}
            </>
          );
        }}
      </Loaded>
    </div>
  );
}

function StartReplay({ decision, base, onStarted }: { decision: DecisionDetails; base: string; onStarted: (id: string) => void }) {
  const { t } = useApp();
  const [version, setVersion] = useState('draft');
  const [by, setBy] = useState<'last' | 'range'>('last');
  const [last, setLast] = useState('100');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const { busy, error, act } = useAction();
  const hintId = useId();

  const rangeValid = by === 'last' || (from !== '' && to !== '' && !Number.isNaN(Date.parse(from)) && !Number.isNaN(Date.parse(to)));
  const lastValid = by === 'range' || /^[1-9][0-9]*$/.test(last);
  const query =
    !rangeValid || !lastValid
      ? null
      : by === 'last'
        ? `last=${Number(last)}`
        : `from=${encodeURIComponent(new Date(from).toISOString())}&to=${encodeURIComponent(new Date(to).toISOString())}`;
  const eligible = useEligible(base, query);
  const start = async () => {
    const selection = by === 'last' ? { last: Number(last) } : { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
    const started = await act(() => api<ReplayView>('POST', base, { version: version === 'draft' ? null : Number(version), ...selection }));
    if (started) onStarted(started.id);
  };
  const noneEligible = eligible.state === 'ready' && eligible.data.eligible === 0;
  const active = decision.active_version;
  const replayed = version === 'draft' ? t('rpl.theDraft') : t('pg.versionN', { version: Number(version) });

  return (
    <section className="card" aria-labelledby="replay-start-title">
      <h2 id="replay-start-title">{t('rpl.title')}</h2>
      <p className="muted" id={hintId}>
        {t('rpl.lead', { max: REPLAY_MAX_EXECUTIONS })}
      </p>
      <form
        className="inline-form"
        aria-describedby={hintId}
        onSubmit={(event) => {
          event.preventDefault();
          void start();
        }}
      >
        <Choice
          label={t('rpl.what')}
          value={version}
          first={{ value: 'draft', label: t('rpl.draft') }}
          options={[...decision.versions].reverse().map((number) => ({ value: String(number), label: t('pg.versionN', { version: number }) }))}
          onChange={setVersion}
        />
        <label className="field narrow">
          <span>{t('rpl.by')}</span>
          <select value={by} onChange={(event) => setBy(event.target.value as 'last' | 'range')}>
            <option value="last">{t('rpl.byLast')}</option>
            <option value="range">{t('rpl.byRange')}</option>
          </select>
        </label>
        {by === 'last' ? (
          <label className="field narrow">
            <span>{t('rpl.last')}</span>
            <input type="number" min={1} max={REPLAY_MAX_EXECUTIONS} step={1} required value={last} onChange={(event) => setLast(event.target.value)} />
          </label>
        ) : (
          <>
            <label className="field narrow">
              <span>{t('rpl.from')}</span>
              <input type="datetime-local" required value={from} onChange={(event) => setFrom(event.target.value)} />
            </label>
            <label className="field narrow">
              <span>{t('rpl.to')}</span>
              <input type="datetime-local" required value={to} onChange={(event) => setTo(event.target.value)} />
            </label>
          </>
        )}
        <button type="submit" className="primary" disabled={busy || !rangeValid || !lastValid || eligible.state !== 'ready' || noneEligible}>
          {t('rpl.start')}
        </button>
      </form>
      <p className="muted" role="status" aria-live="polite">
        {eligible.state === 'reading' && t('rpl.eligibleReading')}
        {eligible.state === 'ready' &&
          (noneEligible ? (
            t(eligible.data.store_input ? 'rpl.noneEligible' : 'rpl.noneEligibleOff')
          ) : (
            <>
              {eligible.data.eligible === 1 ? t('rpl.eligibleOne') : t('rpl.eligible', { count: eligible.data.eligible })}
              {eligible.data.without_input > 0 && <> {t('rpl.eligibleSkipped', { count: eligible.data.without_input })}</>}{' '}
              {active === null || String(active) === version
                ? t('rpl.eligibleSelf', { calls: eligible.data.eligible })
                : t('rpl.eligibleCalls', {
                    subject: replayed,
                    active,
                    calls: eligible.data.eligible * 2,
                  })}
            </>
          ))}
      </p>
      {eligible.state === 'failed' && <ErrorBox error={eligible.error} />}
      {error !== null && <ErrorBox error={error} />}
    </section>
  );
}

type EligibleState = { state: 'idle' | 'reading' } | { state: 'ready'; data: Eligible } | { state: 'failed'; error: unknown };

/** What a replay of the selection would take, counted again whenever the selection changes and rests. */
function useEligible(base: string, query: string | null): EligibleState {
  const [eligible, setEligible] = useState<EligibleState>({ state: 'idle' });
  useEffect(() => {
    if (query === null) {
      setEligible({ state: 'idle' });
      return;
    }
    let current = true;
    setEligible({ state: 'reading' });
    const timer = setTimeout(() => {
      api<Eligible>('GET', `${base}/eligible?${query}`).then(
        (data) => current && setEligible({ state: 'ready', data }),
        (error: unknown) => current && setEligible({ state: 'failed', error }),
      );
    }, ELIGIBLE_PAUSE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [base, query]);
  return eligible;
}

function ReplayCard({ replay, base, onChanged }: { replay: ReplayView; base: string; onChanged: () => void }) {
  const { t } = useApp();
  const { busy, error, act } = useAction(onChanged);
  const titleId = useId();
  const { progress, result } = replay;
  const baseline = replay.baseline ?? null;
  const baselineByKey = new Map((baseline?.questions ?? []).map((question) => [question.key, question]));
  const ran = progress.done + progress.failed;
  const subject = replay.version === null ? t('rpl.draft') : t('pg.versionN', { version: replay.version });
  const selection =
    'last' in replay.selection
      ? t('rpl.selLast', { count: replay.selection.last })
      : t('rpl.selRange', { from: formatDate(replay.selection.from), to: formatDate(replay.selection.to) });
  return (
    <section className="card replay" aria-labelledby={titleId}>
      <h2 id={titleId}>{t('rpl.of', { subject })}</h2>
      <p className="muted">
        {selection} · {t('rpl.startedAt', { at: formatDate(replay.created_at) })} ·{' '}
        <span className={`badge ${replay.status === 'completed' ? 'deployed' : replay.status === 'cancelled' ? 'error' : 'draft'}`}>
          {t(`rpl.status.${replay.status}`)}
        </span>
      </p>
      <div className="replay-progress">
        <progress max={progress.total} value={ran} aria-label={t('rpl.progress')} aria-valuetext={t('rpl.ran', { ran, total: progress.total })} />
        <p role="status">
          {t('rpl.ran', { ran, total: progress.total })}
          {progress.failed > 0 && <> · {t('rpl.failed', { count: progress.failed })}</>}
          {progress.cancelled > 0 && <> · {t('rpl.cancelledN', { count: progress.cancelled })}</>}
          {replay.status !== 'running' && (progress.running ?? 0) > 0 && <> · {t('rpl.inFlight', { count: progress.running ?? 0 })}</>}
        </p>
        {replay.status === 'running' && (
          <button type="button" disabled={busy} onClick={() => void act(() => api('POST', `${base}/${replay.id}/cancel`))}>
            {t('rpl.cancel')}
          </button>
        )}
      </div>
      {error !== null && <ErrorBox error={error} />}
      {result.compared > 0 && (
        <>
          <dl className="replay-figures">
            <div>
              <dt>{t('rpl.actionAgreement')}</dt>
              <dd>
                {baseline !== null && baseline.compared > 0
                  ? t('rpl.actionAgreementBaseline', { replay: percent(result.action.agreement), baseline: percent(baseline.action.agreement) })
                  : percent(result.action.agreement)}{' '}
                <span className="muted small">({t('rpl.agreedOf', { agreed: result.action.agreed, compared: result.compared })})</span>
              </dd>
            </div>
            {result.accuracy.labelled > 0 && (
              <div>
                <dt>{t('rpl.accuracy', { count: result.accuracy.labelled })}</dt>
                <dd>{t('rpl.accuracyOldNew', { old: percent(result.accuracy.old), new: percent(result.accuracy.new) })}</dd>
              </div>
            )}
          </dl>
          {baseline !== null && (
            <p className="muted">
              {baseline.same_as_result ? t('rpl.baselineSelf', { active: baseline.version }) : t('rpl.baselineLead', { active: baseline.version })}
            </p>
          )}
          <ConfusionTable actions={result.confusion.actions} counts={result.confusion.counts} />
          <DataTable
            label={t('rpl.questions')}
            caption="shown"
            cards={false}
            rows={result.questions}
            rowKey={(question) => question.key}
            columns={[
              { key: 'question', header: t('rpl.question'), rowHeader: true, cell: (question) => <code>{question.key}</code> },
              { key: 'agreement', header: t('rpl.agreement'), cell: (question) => percent(question.agreement) },
              ...(baseline === null
                ? []
                : [
                    {
                      key: 'baseline',
                      header: t('rpl.baselineAgreement'),
                      cell: (question: Comparison['questions'][number]) => percent(baselineByKey.get(question.key)?.agreement ?? null),
                    },
                  ]),
              { key: 'compared', header: t('rpl.compared'), cell: (question) => question.compared },
            ]}
          />
          {result.reviewers && result.reviewers.executions > 0 && (
            <DataTable
              label={t('rpl.reviewers', { count: result.reviewers.executions })}
              caption="shown"
              cards={false}
              testId="rpl-reviewers"
              rows={[
                { key: '', compared: result.reviewers.action.compared, old: result.reviewers.action.old, new: result.reviewers.action.new },
                ...result.reviewers.questions,
              ]}
              rowKey={(row) => row.key || '(action)'}
              columns={[
                { key: 'subject', header: t('rpl.question'), rowHeader: true, cell: (row) => (row.key ? <code>{row.key}</code> : t('rpl.reviewersAction')) },
                { key: 'old', header: t('rpl.reviewersOld'), cell: (row) => percent(row.old) },
                { key: 'new', header: t('rpl.reviewersNew'), cell: (row) => percent(row.new) },
                { key: 'compared', header: t('rpl.compared'), cell: (row) => row.compared },
              ]}
            />
          )}
          <Differences base={`${base}/${replay.id}`} />
        </>
      )}
    </section>
  );
}

/** Old action down the side, new action across the top: the diagonal is where both agree. */
function ConfusionTable({ actions, counts }: { actions: string[]; counts: number[][] }) {
  const { t } = useApp();
  return (
    <TableWrap label={t('rpl.confusion')}>
      <table className="confusion">
        <caption>{t('rpl.confusion')}</caption>
        <thead>
          <tr>
            <td />
            {actions.map((action) => (
              <th scope="col" key={action}>
                <span className="visually-hidden">{t('rpl.newAction')} </span>
                {action}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {actions.map((action, row) => (
            <tr key={action}>
              <th scope="row">
                <span className="visually-hidden">{t('rpl.oldAction')} </span>
                {action}
              </th>
              {counts[row]!.map((count, column) => (
                <td key={column} className={row === column ? 'agree' : count > 0 ? 'differ' : undefined}>
                  {count}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small">{t('rpl.confusionHint')}</p>
    </TableWrap>
  );
}

/** The replayed executions whose action changed, a page at a time. */
function Differences({ base }: { base: string }) {
  const { t } = useApp();
  const [rows, setRows] = useState<ReplayedExecution[]>([]);
  const [after, setAfter] = useState<number | null>(0);
  const { busy, error, act } = useAction();
  const more = () =>
    void act(async () => {
      const page = await api<{ data: ReplayedExecution[]; next_after: number | null }>('GET', `${base}/executions?after=${after ?? 0}&limit=200`);
      setRows((seen) => [...seen, ...page.data]);
      setAfter(page.next_after);
    });
  const changed = rows.filter((row) => row.status === 'failed' || (row.new !== null && row.new.action !== row.old.action));
  return (
    <details
      onToggle={(event) => {
        if ((event.target as HTMLDetailsElement).open && rows.length === 0) more();
      }}
    >
      <summary>{t('rpl.differences')}</summary>
      {error !== null && <ErrorBox error={error} />}
      {rows.length > 0 && (
        <DataTable
          label={t('rpl.differences')}
          rows={changed}
          rowKey={(row) => row.position}
          empty={t('rpl.noDifferences', { count: rows.length })}
          paging={{ more, hasMore: after !== null, busy, label: t('rpl.more') }}
          columns={[
            { key: 'execution', header: t('rpl.execution'), cell: (row) => <code>{row.execution_id}</code> },
            { key: 'old', header: t('rpl.oldAction'), cell: (row) => row.old.action },
            { key: 'new', header: t('rpl.newAction'), cell: (row) => row.new?.action ?? row.error?.code ?? '—' },
            { key: 'answers', header: t('rpl.answersChanged'), cell: (row) => answersChanged(row.old.answers, row.new?.answers ?? null) || '—' },
          ]}
        />
      )}
    </details>
  );
}

function answersChanged(old: Answers, next: Answers): string {
  if (old === null || next === null) return '';
  return Object.keys(next)
    .filter((key) => old[key] !== undefined && old[key] !== next[key])
    .map((key) => `${key}: ${String(old[key])} → ${String(next[key])}`)
    .join('; ');
}

function EarlierReplays({ replays, current, onShow }: { replays: ReplayView[]; current: string | null; onShow: (id: string) => void }) {
  const { t } = useApp();
  return (
    <section className="card" aria-labelledby="replays-earlier-title">
      <h2 id="replays-earlier-title">{t('rpl.earlier')}</h2>
      <DataTable
        label={t('rpl.earlier')}
        rows={replays}
        rowKey={(replay) => replay.id}
        columns={[
          { key: 'started', header: t('rpl.startedCol'), cell: (replay) => formatDate(replay.created_at) },
          { key: 'what', header: t('rpl.what'), cell: (replay) => (replay.version === null ? t('rpl.draft') : t('pg.versionN', { version: replay.version })) },
          { key: 'status', header: t('rpl.statusCol'), cell: (replay) => t(`rpl.status.${replay.status}`) },
          { key: 'agreement', header: t('rpl.actionAgreement'), cell: (replay) => percent(replay.result.action.agreement) },
          {
            key: 'show',
            header: t('rpl.show'),
            headerHidden: true,
            cell: (replay) => (
              <button
                type="button"
                disabled={replay.id === current}
                aria-label={t('rpl.showAt', { at: formatDate(replay.created_at) })}
                onClick={() => onShow(replay.id)}
              >
                {t('rpl.show')}
              </button>
            ),
          },
        ]}
      />
    </section>
  );
}
