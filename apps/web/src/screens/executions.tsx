import { Fragment, useId, useState } from 'react';
import { ACTIONS, NormalizedSchema, outcomesOf, validateSchema } from '@ds/decision-schema';
import { api, DecisionDetails, DecisionSummary } from '../lib/api';
import { may, useApp } from '../context';
import { Link } from '../router';
import { CursorListBody, ErrorBox, formatDate, ListToolbar, Loaded, Page, useAction, useCursorList, useLoad } from '../ui';
import { RunResult } from './playground';
import { TraceTable } from './trace';

type Execution = Record<string, any> & { id: string; decision: string; status: string; source: string; created_at: string };

/** Executions already fetched in this tab, so the detail view opens without another round of paging. */
const seen = new Map<string, Execution>();

async function page(ws: string, params: Record<string, string>): Promise<{ data: Execution[]; has_more: boolean; next_cursor: string | null }> {
  const query = new URLSearchParams(Object.entries(params).filter(([, value]) => value !== ''));
  const reply = await api<{ data: Execution[]; has_more: boolean; next_cursor: string | null }>('GET', `/workspaces/${ws}/executions?${query}`);
  for (const execution of reply.data) seen.set(execution.id, execution);
  return reply;
}

export function Executions() {
  const { t, workspace } = useApp();
  const [decisions] = useLoad(() => api<{ data: DecisionSummary[] }>('GET', `/workspaces/${workspace!.id}/decisions`), [workspace!.id]);
  const [decision, setDecision] = useState(() => new URLSearchParams(location.search).get('decision') ?? '');
  return (
    <Page title={t('ex.title')}>
      <label className="field narrow">
        <span>{t('ex.decision')}</span>
        <select value={decision} onChange={(event) => setDecision(event.target.value)}>
          <option value="">{t('ex.all')}</option>
          {decisions.state === 'ready' &&
            decisions.data.data.map((item) => (
              <option key={item.slug} value={item.slug}>
                {item.name}
              </option>
            ))}
        </select>
      </label>
      <ExecutionsTable decision={decision} />
    </Page>
  );
}

export function ExecutionsTable({ decision }: { decision: string }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [status, setStatus] = useState('');
  const list = useCursorList<Execution>((cursor) => page(ws, { limit: '20', decision, status, ...(cursor ? { cursor } : {}) }), [ws, decision, status]);

  return (
    <div className="stack">
      <ListToolbar
        label={t('ex.status')}
        value={status}
        options={(['any', 'success', 'error'] as const).map((value) => ({ value: value === 'any' ? '' : value, label: t(`ex.status.${value}`) }))}
        onChange={setStatus}
        onRefresh={() => void list.load(null)}
        busy={list.busy}
      />
      <CursorListBody list={list} empty={t('ex.empty')}>
        {(rows) => (
          <div className="table-wrap">
            <table className="executions">
              <thead>
                <tr>
                  <th scope="col">{t('ex.created')}</th>
                  <th scope="col">{t('ex.decision')}</th>
                  <th scope="col">{t('ex.status')}</th>
                  <th scope="col">{t('ex.source')}</th>
                  <th scope="col">{t('ex.action')}</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.id}>
                    <td>
                      <Link href={`/executions/${row.id}`}>{formatDate(row.created_at)}</Link>
                    </td>
                    <td>
                      <code>{row.decision}</code> <VersionLabel version={row.version} />
                    </td>
                    <td>
                      <span className={`badge ${row.status}`}>{row.status}</span>
                    </td>
                    <td>{row.source}</td>
                    <td>{row.action ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </CursorListBody>
    </div>
  );
}

export function ExecutionDetail({ id }: { id: string }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [value, reload] = useLoad(async () => {
    // Lists are read without traces; the detail asks for one.
    if (seen.get(id)?.trace !== undefined) return seen.get(id)!;
    // No single-execution endpoint: page through the most recent executions until this one turns up.
    let cursor: string | null = null;
    for (let round = 0; round < 10; round++) {
      const reply = await page(ws, { limit: '100', include: 'trace', ...(cursor ? { cursor } : {}) });
      const found = reply.data.find((execution) => execution.id === id);
      if (found) return found;
      if (!reply.has_more) break;
      cursor = reply.next_cursor;
    }
    return null;
  }, [ws, id]);
  return (
    <Page title={t('ex.detail', { id })}>
      <p>
        <Link href="/executions">{t('ex.back')}</Link>
      </p>
      <Loaded value={value} reload={reload}>
        {(execution) =>
          execution === null ? (
            <p role="alert">{t('error.notFound')}</p>
          ) : (
            <div className="stack">
              <dl className="facts">
                <dt>{t('ex.decision')}</dt>
                <dd>
                  <code>{execution.decision}</code> <VersionLabel version={execution.version} />
                </dd>
                <dt>{t('ex.status')}</dt>
                <dd>{execution.status}</dd>
                <dt>{t('ex.source')}</dt>
                <dd>{execution.source}</dd>
                <dt>{t('ex.created')}</dt>
                <dd>{formatDate(execution.created_at)}</dd>
                <dt>{t('error.requestId')}</dt>
                <dd>
                  <code>{execution.request_id}</code>
                </dd>
              </dl>
              {execution.status === 'error' ? (
                <ErrorBox error={new Error(JSON.stringify(execution.error))} />
              ) : (
                <>
                  <RunResult result={execution} />
                  <TraceTable trace={execution.trace} />
                </>
              )}
              <OutcomeSection execution={execution} />
            </div>
          )
        }
      </Loaded>
    </Page>
  );
}

/** Playground runs of the draft are recorded with version 0. */
function VersionLabel({ version }: { version: number }) {
  const { t } = useApp();
  return <span className="muted small">{version === 0 ? t('pg.draft') : t('pg.versionN', { version })}</span>;
}

interface RecordedOutcome {
  answers: Record<string, string | boolean>;
  action: string | null;
  recorded_at: string;
}

/** The schema of the version that answered an execution: the active one, or (for admins) an earlier one. */
async function versionSchema(ws: string, slug: string, version: number, mayReadVersions: boolean): Promise<NormalizedSchema | null> {
  const decision = await api<DecisionDetails>('GET', `/workspaces/${ws}/decisions/${encodeURIComponent(slug)}`);
  let schema: unknown = null;
  if (decision.active_version === version) schema = decision.active_schema;
  else if (mayReadVersions) {
    schema = (await api<{ to: { schema: unknown } }>('GET', `/workspaces/${ws}/decisions/${decision.id}/versions/compare?from=${version}&to=${version}`)).to
      .schema;
  }
  if (schema === null) return null;
  const checked = validateSchema(schema);
  return checked.valid ? checked.schema : null;
}

/** What turned out to be right for an execution, recorded by a person with the decision's own options. */
function OutcomeSection({ execution }: { execution: Execution }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [outcome, setOutcome] = useState<RecordedOutcome | null>(execution.outcome ?? null);
  const writer = may(workspace, 'decisions:write');
  const playground = execution.version === 0;
  const [schema] = useLoad(
    async () => (writer && !playground ? versionSchema(ws, execution.decision, execution.version, may(workspace, 'decisions:deploy')) : null),
    [ws, execution.decision, execution.version, writer, playground],
  );
  return (
    <section className="card stack" aria-labelledby="outcome-title">
      <h2 id="outcome-title">{t('oc.title')}</h2>
      <p className="muted small">{t('oc.lead')}</p>
      {outcome ? <OutcomeFacts outcome={outcome} /> : <p data-testid="outcome-none">{t('oc.none')}</p>}
      {playground ? (
        <p className="muted small">{t('oc.playground')}</p>
      ) : (
        writer && (
          <Loaded value={schema}>
            {(loaded) =>
              loaded === null ? (
                <p className="muted small">{t('oc.olderVersion', { version: execution.version })}</p>
              ) : (
                <OutcomeForm executionId={execution.id} schema={loaded} outcome={outcome} onRecorded={setOutcome} />
              )
            }
          </Loaded>
        )
      )}
    </section>
  );
}

function OutcomeFacts({ outcome }: { outcome: RecordedOutcome }) {
  const { t } = useApp();
  const shown = (value: string | boolean) => (value === true ? t('oc.yes') : value === false ? t('oc.no') : value);
  return (
    <dl className="facts" data-testid="outcome-recorded">
      {Object.entries(outcome.answers).map(([key, value]) => (
        <Fragment key={key}>
          <dt>
            <code>{key}</code>
          </dt>
          <dd>{shown(value)}</dd>
        </Fragment>
      ))}
      {outcome.action !== null && (
        <>
          <dt>{t('oc.action')}</dt>
          <dd>{outcome.action}</dd>
        </>
      )}
      <dt>{t('oc.recorded')}</dt>
      <dd>{formatDate(outcome.recorded_at)}</dd>
    </dl>
  );
}

/** Every field starts unreported; only the fields a person set are sent, so a partial outcome stays partial. */
function OutcomeForm({
  executionId,
  schema,
  outcome,
  onRecorded,
}: {
  executionId: string;
  schema: NormalizedSchema;
  outcome: RecordedOutcome | null;
  onRecorded: (outcome: RecordedOutcome) => void;
}) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const id = useId();
  const [answers, setAnswers] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(outcome?.answers ?? {}).map(([key, value]) => [key, String(value)])),
  );
  const [action, setAction] = useState(outcome?.action ?? '');
  const [saved, setSaved] = useState(false);
  const { busy, error, act } = useAction();
  const submit = () =>
    void act(async () => {
      setSaved(false);
      const body: Record<string, unknown> = {};
      const reported = schema.questions.filter((question) => (answers[question.key] ?? '') !== '');
      if (reported.length > 0) {
        body.answers = Object.fromEntries(
          reported.map((question) => {
            const value = answers[question.key]!;
            return [question.key, question.kind === 'probability' ? value === 'true' : value];
          }),
        );
      }
      if (action !== '') body.action = action;
      const reply = await api<RecordedOutcome>('PUT', `/workspaces/${ws}/executions/${executionId}/outcome`, body);
      onRecorded(reply);
      setSaved(true);
    });
  return (
    <form
      className="stack"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <div className="outcome-fields">
        {schema.questions.map((question) => (
          <label key={question.key} className="field" htmlFor={`${id}-${question.key}`}>
            <span>
              <code>{question.key}</code> <span className="muted small">({question.kind})</span>
            </span>
            <select
              id={`${id}-${question.key}`}
              value={answers[question.key] ?? ''}
              onChange={(event) => setAnswers({ ...answers, [question.key]: event.target.value })}
            >
              <option value="">{t('oc.notReported')}</option>
              {question.kind === 'probability' ? (
                <>
                  <option value="true">{t('oc.yes')}</option>
                  <option value="false">{t('oc.no')}</option>
                </>
              ) : (
                outcomesOf(question).map((value) => (
                  <option key={value} value={value}>
                    {value}
                  </option>
                ))
              )}
            </select>
          </label>
        ))}
        <label className="field" htmlFor={`${id}-action`}>
          <span>{t('oc.action')}</span>
          <select id={`${id}-action`} value={action} onChange={(event) => setAction(event.target.value)}>
            <option value="">{t('oc.notReported')}</option>
            {ACTIONS.map((one) => (
              <option key={one} value={one}>
                {one}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error !== null && <ErrorBox error={error} />}
      {saved && (
        <p className="notice" role="status">
          {t('oc.saved')}
        </p>
      )}
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {t('oc.save')}
        </button>
      </div>
    </form>
  );
}
