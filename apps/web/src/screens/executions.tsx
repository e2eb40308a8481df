import { Fragment, useId, useState } from 'react';
import { ACTIONS, NormalizedSchema, outcomesOf, validateSchema } from '@ds/decision-schema';
import { api, DecisionDetails } from '../lib/api';
import { may, useApp } from '../context';
import { formatCount, formatUsd } from '../lib/numbers';
import { Link } from '../router';
import { Choice, ErrorBox, formatDate, Loaded, Page, useAction, useLoad } from '../ui';
import { ExecutionFailure } from '../components/execution-failure';
import { DeliveryStatus, useDeliveryStatuses } from './deliveries';
import { RunResult } from './playground';
import { TraceTable } from './trace';

export type Execution = Record<string, any> & { id: string; decision: string; status: string; source: string; created_at: string };

/** Executions already fetched in this tab, so the detail view opens without another round of paging. */
const seen = new Map<string, Execution>();

export interface ExecutionPage {
  data: Execution[];
  has_more: boolean;
  next_cursor: string | null;
  /** With `include=total_count`: what matches, counted up to a cap, and whether more match. */
  total_count?: number;
  total_capped?: boolean;
}

export async function page(ws: string, params: Record<string, string>): Promise<ExecutionPage> {
  // Without a source the application lists live runs only; a lookup by id must find a run of any source.
  const query = new URLSearchParams(Object.entries({ source: 'all', ...params }).filter(([, value]) => value !== ''));
  const reply = await api<ExecutionPage>('GET', `/workspaces/${ws}/executions?${query}`);
  for (const execution of reply.data) seen.set(execution.id, execution);
  return reply;
}

export interface Metrics {
  latency_ms?: number;
  model?: string;
  estimated_cost_usd?: number;
  input_tokens?: number;
  output_tokens?: number;
}

export function metricsOf(execution: Execution): Metrics {
  return execution.metrics ?? {};
}

/** The deliveries an execution queued: its destination entries that carry a `dlv_…` id. */
export function queuedDeliveries(execution: Execution): string[] {
  const entries: Array<{ delivery_id?: unknown }> = Array.isArray(execution.destinations) ? execution.destinations : [];
  return entries.flatMap((entry) => (typeof entry.delivery_id === 'string' ? [entry.delivery_id] : []));
}

export function ModeBadge({ livemode }: { livemode: unknown }) {
  const { t } = useApp();
  return livemode === false ? <span className="badge">{t('ex.test')}</span> : <span className="badge success">{t('ex.live')}</span>;
}

export function DeliveryLinks({ ids, statuses }: { ids: string[]; statuses: Record<string, DeliveryStatus> }) {
  const { t } = useApp();
  if (ids.length === 0) return <>—</>;
  return (
    <ul className="plain-list">
      {ids.map((id) => {
        const status = statuses[id];
        return (
          <li key={id}>
            <Link href={`/deliveries/${id}`} data-testid="execution-delivery">
              {status ? t(`dlv.status.${status}`) : t('ex.deliveryUnknown')}
              <span className="visually-hidden"> {id}</span>
            </Link>
          </li>
        );
      })}
    </ul>
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
  const deliveries = useDeliveryStatuses(ws, value.state === 'ready' && value.data ? queuedDeliveries(value.data) : []);
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
                <dd>
                  {execution.source} <ModeBadge livemode={execution.livemode} />
                </dd>
                <ExecutionMetrics metrics={execution.metrics ?? {}} />
                {queuedDeliveries(execution).length > 0 && (
                  <>
                    <dt>{t('ex.deliveries')}</dt>
                    <dd>
                      <DeliveryLinks ids={queuedDeliveries(execution)} statuses={deliveries} />
                    </dd>
                  </>
                )}
                <dt>{t('ex.created')}</dt>
                <dd>{formatDate(execution.created_at)}</dd>
                <dt>{t('error.requestId')}</dt>
                <dd>
                  <code>{execution.request_id}</code>
                </dd>
              </dl>
              <TryState execution={execution} />
              {execution.status === 'error' ? (
                <ExecutionFailure error={execution.error} />
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

function ExecutionMetrics({ metrics }: { metrics: Metrics }) {
  const { t, locale } = useApp();
  return (
    <>
      {metrics.model && (
        <>
          <dt>{t('ex.model')}</dt>
          <dd>
            <code>{metrics.model}</code>
          </dd>
        </>
      )}
      {metrics.latency_ms !== undefined && (
        <>
          <dt>{t('ex.latency')}</dt>
          <dd>{t('dlv.ms', { ms: formatCount(metrics.latency_ms, locale) })}</dd>
        </>
      )}
      {metrics.input_tokens !== undefined && (
        <>
          <dt>{t('ex.tokens')}</dt>
          <dd>{t('ex.tokensInOut', { in: formatCount(metrics.input_tokens, locale), out: formatCount(metrics.output_tokens ?? 0, locale) })}</dd>
        </>
      )}
      {metrics.estimated_cost_usd !== undefined && (
        <>
          <dt>{t('ex.cost')}</dt>
          <dd>{formatUsd(metrics.estimated_cost_usd, locale)}</dd>
        </>
      )}
    </>
  );
}

/** Opens the playground with the state this execution was called with, for people who may run the playground. */
function TryState({ execution }: { execution: Execution }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const writer = may(workspace, 'decisions:write');
  const [input] = useLoad(
    async () => (writer ? api<{ kept: boolean }>('GET', `/workspaces/${ws}/executions/${encodeURIComponent(execution.id)}/input`) : null),
    [ws, execution.id, writer],
  );
  if (!writer || input.state !== 'ready' || input.data === null) return null;
  if (!input.data.kept) return <p className="muted small">{t('ex.noState')}</p>;
  return (
    <p>
      <Link className="button" href={`/decisions/${execution.decision_id}/playground?from=${encodeURIComponent(execution.id)}`}>
        {t('ex.tryState')}
      </Link>{' '}
      <span className="muted small">{t('ex.tryStateNote')}</span>
    </p>
  );
}

/** Playground runs of the draft are recorded with version 0. */
export function VersionLabel({ version }: { version: number }) {
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

/** The sources whose runs take outcomes: the API's `EXECUTION_SOURCES` (libs/contracts), of a deployed version. */
const LIVE_SOURCES = ['api', 'webhook', 'mcp'];

function isLiveRun(execution: Execution): boolean {
  return LIVE_SOURCES.includes(execution.source) && execution.version >= 1;
}

/** What turned out to be right for an execution, recorded by a person with the decision's own options. */
function OutcomeSection({ execution }: { execution: Execution }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [outcome, setOutcome] = useState<RecordedOutcome | null>(execution.outcome ?? null);
  const writer = may(workspace, 'decisions:write');
  const live = isLiveRun(execution);
  const [schema] = useLoad(
    async () => (writer && live ? versionSchema(ws, execution.decision, execution.version, may(workspace, 'decisions:deploy')) : null),
    [ws, execution.decision, execution.version, writer, live],
  );
  return (
    <section className="card stack" aria-labelledby="outcome-title">
      <h2 id="outcome-title">{t('oc.title')}</h2>
      <p className="muted small">{t('oc.lead')}</p>
      {outcome ? <OutcomeFacts outcome={outcome} /> : <p data-testid="outcome-none">{t('oc.none')}</p>}
      {!live ? (
        <p className="muted small">{t('oc.notLive')}</p>
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
        <Choice
          className="field"
          id={`${id}-action`}
          label={t('oc.action')}
          value={action}
          first={{ value: '', label: t('oc.notReported') }}
          options={ACTIONS.map((one) => ({ value: one, label: one }))}
          onChange={setAction}
        />
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
