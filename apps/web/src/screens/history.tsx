import { useState } from 'react';
import type { Change } from '@ds/decision-schema';
import { api, DecisionDetails } from '../lib/api';
import { may, useApp } from '../context';
import { ErrorBox, formatDate, Loaded, Outcome, useAction, useLoad } from '../ui';
import { confirmColumn, DataTable } from '../components/data-table';
import { ChangeList } from './changes';
import { ShadowPanel } from './shadow';

interface VersionSummary {
  version: number;
  deployed_at: string;
  deployed_by: { user_id: string; email: string | null } | null;
  rolled_back_from: number | null;
  note: string | null;
  active: boolean;
  shadow: boolean;
  contract_changes: Change[];
}

interface Comparison {
  from: { version: number };
  to: { version: number };
  schema_changes: Change[];
  contract_changes: Change[];
}

/** A decision's deployed versions: who deployed each and what its contract changed; compare two; roll back. */
export function History({ decision, reload }: { decision: DecisionDetails; reload: () => void }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const base = `/workspaces/${ws}/decisions/${decision.id}/versions`;
  const [versions, reloadVersions] = useLoad(() => api<{ data: VersionSummary[] }>('GET', base), [base, decision.active_version]);
  const [message, setMessage] = useState<string | null>(null);
  const after = () => {
    reloadVersions();
    reload();
  };
  const { busy, error, act } = useAction(after);
  const admin = may(workspace, 'decisions:deploy');

  const rollback = async (version: number) => {
    setMessage(null);
    const done = await act(() => api<{ version: number }>('POST', `${base}/${version}/rollback`));
    if (done) setMessage(t('hist.rolledBack', { version: done.version, from: version }));
  };

  if (!admin) return <p className="muted">{t('error.forbidden')}</p>;
  return (
    <div className="stack">
      <Outcome error={error} message={message} />
      {decision.active_version !== null && <ShadowPanel decision={decision} versions={decision.versions} onChanged={after} />}
      <Loaded value={versions} reload={reloadVersions}>
        {({ data }) => (
          <>
            <section className="card" aria-labelledby="history-title">
              <h2 id="history-title">{t('hist.title')}</h2>
              <DataTable
                label={t('hist.title')}
                className="history"
                rows={data}
                rowKey={(row) => row.version}
                empty={t('hist.none')}
                columns={[
                  {
                    key: 'version',
                    header: t('hist.version'),
                    rowHeader: true,
                    cardLabel: null,
                    cell: (row) => (
                      <>
                        {t('pg.versionN', { version: row.version })} {row.active && <span className="badge deployed">{t('dep.active')}</span>}
                        {row.shadow && <span className="badge">{t('shadow.badge')}</span>}
                        {row.rolled_back_from !== null && <div className="muted small">{t('hist.rollbackOf', { version: row.rolled_back_from })}</div>}
                        {row.note !== null && (
                          <div className="deploy-note" data-testid="deploy-note">
                            {row.note}
                          </div>
                        )}
                      </>
                    ),
                  },
                  { key: 'at', header: t('hist.deployedAt'), cell: (row) => formatDate(row.deployed_at) },
                  { key: 'by', header: t('hist.by'), cell: (row) => row.deployed_by?.email ?? row.deployed_by?.user_id ?? t('hist.unknown') },
                  {
                    key: 'changes',
                    header: t('hist.changes'),
                    cell: (row) =>
                      row.contract_changes.length === 0 ? (
                        t('hist.noChanges')
                      ) : (
                        <details>
                          <summary>
                            {row.contract_changes.length === 1 ? t('hist.oneChange') : t('hist.nChanges', { count: row.contract_changes.length })}
                          </summary>
                          <ChangeList changes={row.contract_changes} />
                        </details>
                      ),
                  },
                  confirmColumn<VersionSummary>({
                    label: t('hist.rollback'),
                    subject: (row) => t('pg.versionN', { version: row.version }),
                    question: (row) => t('hist.rollbackQuestion', { version: row.version }),
                    busy,
                    offered: (row) => !row.active,
                    onConfirm: (row) => void rollback(row.version),
                  }),
                ]}
              />
            </section>
            {data.length > 0 && <Compare base={base} versions={data.map((row) => row.version)} />}
          </>
        )}
      </Loaded>
    </div>
  );
}

function Compare({ base, versions }: { base: string; versions: number[] }) {
  const { t } = useApp();
  const [from, setFrom] = useState(versions[1] ?? versions[0]!);
  const [to, setTo] = useState(versions[0]!);
  const [result, setResult] = useState<Comparison | null>(null);
  const { busy, error, act } = useAction();
  const pick = (label: string, value: number, set: (next: number) => void) => (
    <label className="field narrow">
      <span>{label}</span>
      <select value={value} onChange={(event) => set(Number(event.target.value))}>
        {versions.map((version) => (
          <option key={version} value={version}>
            {t('pg.versionN', { version })}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section className="card" aria-labelledby="compare-title">
      <h2 id="compare-title">{t('hist.compare')}</h2>
      <div className="inline-form">
        {pick(t('hist.from'), from, setFrom)}
        {pick(t('hist.to'), to, setTo)}
        <button
          type="button"
          disabled={busy}
          onClick={() => void act(async () => setResult(await api<Comparison>('GET', `${base}/compare?from=${from}&to=${to}`)))}
        >
          {t('hist.show')}
        </button>
      </div>
      {error !== null && <ErrorBox error={error} />}
      {result && (
        <div className="stack" aria-live="polite">
          {result.schema_changes.length === 0 ? (
            <p>{t('hist.same')}</p>
          ) : (
            <>
              <h3>{t('hist.changes')}</h3>
              {result.contract_changes.length === 0 ? <p className="muted">{t('dep.noChanges')}</p> : <ChangeList changes={result.contract_changes} />}
              <h3>{t('hist.schemaChanges')}</h3>
              <ChangeList changes={result.schema_changes} />
            </>
          )}
        </div>
      )}
    </section>
  );
}
