import { useMemo, useState } from 'react';
import { decisionContract, jsonDiff, NormalizedSchema, validateSchema } from '@ds/decision-schema';
import { api, DecisionDetails } from '../lib/api';
import { may, useApp } from '../context';
import { Link } from '../router';
import { DECISION_VIEWS, decisionView, offersView } from '../lib/access';
import { ErrorBox, Loaded, Page, useAction, useLoad } from '../ui';
import { Editor } from './editor';
import { Playground } from './playground';
import { ExecutionsTable } from './executions';
import { DeliveriesTable } from './deliveries';
import { SecretUrl } from './secret-url';
import { ChangeList } from './changes';
import { History } from './history';
import { Overview } from './overview';

export function DecisionPage({ id, view }: { id: string; view: string }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [value, reload, set] = useLoad(() => api<DecisionDetails>('GET', `/workspaces/${ws}/decisions/${encodeURIComponent(id)}`), [ws, id]);
  const current = decisionView(view);
  const views = DECISION_VIEWS.filter((name) => offersView(workspace, name));
  return (
    <Loaded value={value} reload={reload}>
      {(decision) => (
        <Page title={decision.name}>
          <p className="muted">
            <code>{decision.slug}</code> ·{' '}
            <span className={`badge ${decision.status}`}>{t(decision.status === 'draft' ? 'dec.status.draft' : 'dec.status.deployed')}</span>
            {decision.active_version !== null && <> · {t('pg.versionN', { version: decision.active_version })}</>}
          </p>
          <nav className="tabs" aria-label={decision.name}>
            {views.map((name) => (
              <Link key={name} href={`/decisions/${id}/${name}`} aria-current={current === name ? 'page' : undefined}>
                {t(`tabs.${name}`)}
              </Link>
            ))}
          </nav>
          {current === 'overview' && views.includes('overview') && <Overview decision={decision} />}
          {current === 'editor' && views.includes('editor') && <Editor decision={decision} onSaved={set} reload={reload} />}
          {current === 'playground' && views.includes('playground') && <Playground decision={decision} />}
          {current === 'deploy' && views.includes('deploy') && <Deploy decision={decision} reload={reload} />}
          {current === 'executions' && views.includes('executions') && <ExecutionsTable decision={decision.slug} />}
          {current === 'deliveries' && views.includes('deliveries') && <DeliveriesTable decisionId={decision.id} />}
          {current === 'secret-url' && views.includes('secret-url') && <SecretUrl decision={decision} />}
          {current === 'history' && views.includes('history') && <History decision={decision} reload={reload} />}
          {(current === null || !views.includes(current)) && <p role="alert">{t('error.notFound')}</p>}
        </Page>
      )}
    </Loaded>
  );
}

function contractOf(schema: unknown): unknown {
  if (schema === null || schema === undefined) return null;
  const checked = validateSchema(schema);
  const normalized = checked.valid ? checked.schema : (schema as NormalizedSchema);
  try {
    const { slug: _slug, status: _status, version: _version, ...rest } = decisionContract({ slug: '', status: '', version: 0, schema: normalized });
    return rest;
  } catch {
    return null;
  }
}

function Deploy({ decision, reload }: { decision: DecisionDetails; reload: () => void }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [message, setMessage] = useState<string | null>(null);
  const { busy, error, act: run } = useAction(reload);
  const changes = useMemo(() => jsonDiff(contractOf(decision.active_schema), contractOf(decision.draft)), [decision]);
  const admin = may(workspace, 'decisions:deploy');

  const act = async (work: () => Promise<string | null>) => {
    setMessage(null);
    const said = await run(work);
    if (said !== undefined) setMessage(said);
  };

  const runUrl = `${location.origin}/v1/decisions/${decision.slug}`;
  return (
    <div className="stack">
      {error !== null && <ErrorBox error={error} />}
      {message && (
        <p className="notice" role="status">
          {message}
        </p>
      )}
      <section className="card" aria-labelledby="diff-title">
        <h2 id="diff-title">{t('dep.diff')}</h2>
        {decision.active_schema === null ? <p>{t('dep.first')}</p> : changes.length === 0 ? <p>{t('dep.noChanges')}</p> : <ChangeList changes={changes} />}
        <button
          type="button"
          className="primary"
          disabled={!admin || busy}
          onClick={() =>
            void act(async () =>
              t('dep.deployed', { version: (await api<{ version: number }>('POST', `/workspaces/${ws}/decisions/${decision.id}/deploy`)).version }),
            )
          }
        >
          {t('dep.deploy')}
        </button>
        {!admin && <p className="muted small">{t('error.forbidden')}</p>}
      </section>
      <section className="card" aria-labelledby="endpoint-title">
        <h2 id="endpoint-title">{t('dec.endpoint')}</h2>
        <label className="check">
          <input
            type="checkbox"
            checked={decision.endpoint_enabled}
            disabled={!admin || busy}
            aria-describedby="endpoint-hint"
            onChange={(event) => {
              const enabled = event.target.checked;
              void act(async () => {
                await api('PUT', `/workspaces/${ws}/decisions/${decision.id}/endpoint`, { enabled });
                return null;
              });
            }}
          />
          <span>{t('dep.endpoint')}</span>
        </label>
        <small id="endpoint-hint">{t('dep.endpointHint')}</small>
        <h3>{t('dep.runUrl')}</h3>
        <pre className="code">{`curl -X POST ${runUrl} \\\n  -H "Authorization: Bearer $API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"state": …}'`}</pre>
      </section>
      <section className="card" aria-labelledby="versions-title">
        <h2 id="versions-title">{t('dep.versions')}</h2>
        {decision.versions.length === 0 ? (
          <p className="muted">—</p>
        ) : (
          <ul>
            {decision.versions.map((version) => (
              <li key={version}>
                {t('pg.versionN', { version })} {version === decision.active_version && <span className="badge deployed">{t('dep.active')}</span>}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
