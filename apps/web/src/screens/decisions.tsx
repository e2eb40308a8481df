import { FormEvent, useState } from 'react';
import { api, DecisionSummary } from '../lib/api';
import { may, useApp } from '../context';
import { Link, navigate } from '../router';
import { ErrorBox, formatDate, Loaded, Page, useLoad } from '../ui';
import { DataTable } from '../components/data-table';

interface TemplateSummary {
  id: string;
  name: string;
  description: string;
  category: string;
  patterns: string[];
}

const BLANK_SCHEMA = {
  state: { type: 'text' },
  questions: [{ key: 'answer', kind: 'probability', instructions: 'Read the text.', criterion: 'The text asks for something we can do.' }],
  fallbackAction: 'continue',
};

export function DecisionsList() {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const runs = may(workspace, 'executions:read');
  const [value, reload] = useLoad(async () => {
    const [decisions, executions] = await Promise.all([
      api<{ data: DecisionSummary[] }>('GET', `/workspaces/${ws}/decisions`),
      runs
        ? api<{ data: Array<{ decision: string; created_at: string }> }>('GET', `/workspaces/${ws}/executions?limit=100&source=all`).catch(() => ({ data: [] }))
        : { data: [] },
    ]);
    const lastRun = new Map<string, string>();
    for (const execution of executions.data) if (!lastRun.has(execution.decision)) lastRun.set(execution.decision, execution.created_at);
    return { decisions: decisions.data, lastRun };
  }, [ws, runs]);
  return (
    <Page
      title={t('dec.title')}
      actions={
        may(workspace, 'decisions:write') && (
          <Link className="button primary" href="/decisions/new">
            {t('dec.new')}
          </Link>
        )
      }
    >
      <Loaded value={value} reload={reload}>
        {({ decisions, lastRun }) => (
          <DataTable
            label={t('dec.title')}
            caption="none"
            rows={decisions}
            rowKey={(decision) => decision.slug}
            empty={
              <>
                {t('dec.empty')} {may(workspace, 'decisions:write') && <Link href="/decisions/new">{t('tpl.title')}</Link>}
              </>
            }
            columns={[
              {
                key: 'name',
                header: t('dec.name'),
                cell: (decision) => (
                  <>
                    <Link href={`/decisions/${decision.slug}/editor`}>{decision.name}</Link>
                    <div className="muted small">
                      <code>{decision.slug}</code>
                    </div>
                  </>
                ),
              },
              {
                key: 'status',
                header: t('dec.status'),
                cell: (decision) => (
                  <span className={`badge ${decision.status}`}>{t(decision.status === 'draft' ? 'dec.status.draft' : 'dec.status.deployed')}</span>
                ),
              },
              { key: 'version', header: t('dec.activeVersion'), cell: (decision) => decision.active_version ?? '—' },
              { key: 'endpoint', header: t('dec.endpoint'), cell: (decision) => (decision.endpoint_enabled ? t('dec.on') : t('dec.off')) },
              {
                key: 'last-run',
                header: t('dec.lastRun'),
                shown: runs,
                cell: (decision) => (lastRun.has(decision.slug) ? formatDate(lastRun.get(decision.slug)) : t('dec.never')),
              },
            ]}
          />
        )}
      </Loaded>
    </Page>
  );
}

export function NewDecision() {
  const { t, workspace } = useApp();
  const [templates, reload] = useLoad(() => api<{ data: TemplateSummary[] }>('GET', '/templates'), []);
  const [chosen, setChosen] = useState<{ id: string | null; name: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const template = chosen?.id ? await api<{ schema: unknown; description: string }>('GET', `/templates/${chosen.id}`) : null;
      const created = await api<{ id: string; slug: string }>('POST', `/workspaces/${workspace!.id}/decisions`, {
        slug: form.get('slug'),
        name: form.get('name'),
        description: template?.description,
        schema: template?.schema ?? BLANK_SCHEMA,
      });
      navigate(`/decisions/${created.id}/editor`);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title={t('tpl.title')}>
      {chosen && (
        <form className="card inline-form" onSubmit={(event) => void create(event)} key={chosen.id ?? 'blank'}>
          <h2>{t('tpl.create')}</h2>
          {error !== null && <ErrorBox error={error} />}
          <label className="field">
            <span>{t('dec.name')}</span>
            <input name="name" required maxLength={100} defaultValue={chosen.name} autoFocus />
          </label>
          <label className="field">
            <span>{t('dec.slug')}</span>
            <input name="slug" required pattern="[a-z0-9]+(-[a-z0-9]+)*" defaultValue={chosen.id ?? ''} aria-describedby="slug-hint" />
            <small id="slug-hint">{t('tpl.slugHint')}</small>
          </label>
          <button type="submit" className="primary" disabled={busy}>
            {t('tpl.create')}
          </button>
        </form>
      )}
      <Loaded value={templates} reload={reload}>
        {({ data }) => (
          <ul className="cards templates">
            {data.map((template) => (
              <li key={template.id} className={chosen?.id === template.id ? 'card chosen' : 'card'}>
                <h2>{template.name}</h2>
                <p className="muted small">{template.category}</p>
                <p>{template.description}</p>
                <p className="tags">
                  {template.patterns.map((pattern) => (
                    <span key={pattern} className="tag">
                      {pattern}
                    </span>
                  ))}
                </p>
                <button type="button" aria-pressed={chosen?.id === template.id} onClick={() => setChosen({ id: template.id, name: template.name })}>
                  {t('tpl.use')} <span className="visually-hidden">{template.name}</span>
                </button>
              </li>
            ))}
            <li className={chosen && chosen.id === null ? 'card chosen' : 'card'}>
              <h2>{t('tpl.blank')}</h2>
              <button type="button" aria-pressed={chosen !== null && chosen.id === null} onClick={() => setChosen({ id: null, name: '' })}>
                {t('tpl.blank')}
              </button>
            </li>
          </ul>
        )}
      </Loaded>
    </Page>
  );
}
