import { useState } from 'react';
import type { Change, MissingSecret, VersionReview } from '@ds/decision-schema';
import { api, DecisionDetails, ReviewReply } from '../lib/api';
import { may, useApp } from '../context';
import { Choice, ConfirmDialog, ErrorBox, formatDate, Loaded, Outcome, useAction, useLoad } from '../ui';
import { DataTable } from '../components/data-table';
import { BreakingList, MissingSecretsNote, ReviewView } from './changes';
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
  review: VersionReview;
}

interface Comparison {
  from: { version: number };
  to: { version: number };
  schema_changes: Change[];
  contract_changes: Change[];
  review: VersionReview;
  missing_secrets: MissingSecret[] | null;
}

/** A decision's deployed versions: who deployed each and what it changed; compare two; roll back after reading what it changes. */
export function History({ decision, reload }: { decision: DecisionDetails; reload: () => void }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const base = `/workspaces/${ws}/decisions/${decision.id}/versions`;
  const [versions, reloadVersions] = useLoad(() => api<{ data: VersionSummary[] }>('GET', base), [base, decision.active_version]);
  const [message, setMessage] = useState<string | null>(null);
  const [rollingBack, setRollingBack] = useState<number | null>(null);
  const after = () => {
    reloadVersions();
    reload();
  };
  const { busy, error, act } = useAction(after);
  const admin = may(workspace, 'decisions:deploy');

  const rollback = async (version: number) => {
    setRollingBack(null);
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
                    header: t('hist.review'),
                    cell: (row) =>
                      row.review.first ? (
                        t('review.holds', { summary: row.review.summary })
                      ) : row.review.changes === 0 ? (
                        t('hist.noChanges')
                      ) : (
                        <details>
                          <summary>{row.review.changes === 1 ? t('hist.oneChange') : t('hist.nChanges', { count: row.review.changes })}</summary>
                          <ReviewView review={row.review} headingLevel={4} />
                        </details>
                      ),
                  },
                  {
                    key: 'rollback',
                    header: t('hist.rollback'),
                    headerHidden: true,
                    cell: (row) =>
                      row.active ? null : (
                        <button
                          type="button"
                          disabled={busy}
                          aria-label={`${t('hist.rollback')} ${t('pg.versionN', { version: row.version })}`}
                          onClick={() => setRollingBack(row.version)}
                        >
                          {t('hist.rollback')}
                        </button>
                      ),
                  },
                ]}
              />
            </section>
            {rollingBack !== null && (
              <RollbackDialog
                reviewUrl={`/workspaces/${ws}/decisions/${decision.id}/review?version=${rollingBack}`}
                version={rollingBack}
                busy={busy}
                onCancel={() => setRollingBack(null)}
                onConfirm={() => void rollback(rollingBack)}
              />
            )}
            {data.length > 0 && <Compare base={base} versions={data.map((row) => row.version)} />}
          </>
        )}
      </Loaded>
    </div>
  );
}

/** A rollback is a deploy: it says first what it changes against the active version, in the same words. */
function RollbackDialog({
  reviewUrl,
  version,
  busy,
  onCancel,
  onConfirm,
}: {
  reviewUrl: string;
  version: number;
  busy: boolean;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const { t } = useApp();
  const [reply, reload] = useLoad(() => api<ReviewReply>('GET', reviewUrl), [reviewUrl]);
  return (
    <ConfirmDialog
      title={t('hist.rollbackTitle', { version })}
      confirmLabel={t('hist.rollbackTo', { version })}
      busy={busy}
      onCancel={onCancel}
      onConfirm={onConfirm}
    >
      <p>{t('hist.rollbackQuestion', { version })}</p>
      <Loaded value={reply} reload={reload}>
        {(data) => (
          <>
            {data.from !== null && <p>{t('hist.rollbackReview', { version: data.from })}</p>}
            {data.review !== null && <ReviewView review={data.review} />}
            <MissingSecretsNote missing={data.missing_secrets} />
          </>
        )}
      </Loaded>
    </ConfirmDialog>
  );
}

function Compare({ base, versions }: { base: string; versions: number[] }) {
  const { t } = useApp();
  const [from, setFrom] = useState(versions[1] ?? versions[0]!);
  const [to, setTo] = useState(versions[0]!);
  const [result, setResult] = useState<Comparison | null>(null);
  const { busy, error, act } = useAction();
  const pick = (label: string, value: number, set: (next: number) => void) => (
    <Choice
      label={label}
      value={value}
      options={versions.map((version) => ({ value: version, label: t('pg.versionN', { version }) }))}
      onChange={(next) => set(Number(next))}
    />
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
              <ReviewView review={result.review} />
              {result.review.breaking.length > 0 && <BreakingList changes={result.review.breaking} />}
              <MissingSecretsNote missing={result.missing_secrets} />
            </>
          )}
        </div>
      )}
    </section>
  );
}
