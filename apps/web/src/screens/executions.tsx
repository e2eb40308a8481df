import { useState } from 'react';
import { api, DecisionSummary } from '../lib/api';
import { useApp } from '../context';
import { Link } from '../router';
import { CursorListBody, ErrorBox, formatDate, ListToolbar, Loaded, Page, useCursorList, useLoad } from '../ui';
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
