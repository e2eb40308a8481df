import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { can, useApp } from '../context';
import { formatDate, Loaded, Outcome, Page, RefusedPage, useAction, useLoad } from '../ui';
import { confirmColumn, DataTable } from '../components/data-table';

interface Secret {
  name: string;
  created_at: string;
  updated_at: string;
}

/** Workspace secrets: names and dates, a form that creates or replaces one, and deletion. Values are never read back. */
export function Secrets() {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const admin = can(workspace, 'admin');
  const [secrets, reload] = useLoad(
    () => (admin ? api<{ data: Secret[] }>('GET', `/workspaces/${ws}/secrets`) : Promise.resolve({ data: [] as Secret[] })),
    [ws, admin],
  );
  const [saved, setSaved] = useState<string | null>(null);
  const { busy, error, act } = useAction(reload);

  const save = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const name = String(data.get('name') ?? '');
    setSaved(null);
    void act(async () => {
      await api('PUT', `/workspaces/${ws}/secrets/${encodeURIComponent(name)}`, { value: data.get('value') });
      setSaved(name);
      form.reset();
    });
  };

  if (!admin) return <RefusedPage title={t('sec.title')} note={t('sec.adminOnly')} />;
  return (
    <Page title={t('sec.title')}>
      <p>{t('sec.intro')}</p>
      <Outcome error={error} message={saved !== null && t('sec.saved', { name: saved })} />
      <form className="card inline-form" onSubmit={save}>
        <h2>{t('sec.set')}</h2>
        <label className="field">
          <span>{t('sec.name')}</span>
          <input name="name" required maxLength={64} pattern="[A-Z][A-Z0-9_]*" autoComplete="off" aria-describedby="secret-name-hint" />
          <small id="secret-name-hint">{t('sec.nameHint')}</small>
        </label>
        <label className="field">
          <span>{t('sec.value')}</span>
          <input name="value" type="password" required maxLength={4096} autoComplete="new-password" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('sec.set')}
        </button>
      </form>
      <Loaded value={secrets} reload={reload}>
        {({ data }) => (
          <DataTable
            label={t('sec.title')}
            className="secrets"
            rows={data}
            rowKey={(secret) => secret.name}
            empty={t('sec.empty')}
            columns={[
              { key: 'name', header: t('sec.name'), cell: (secret) => secret.name },
              { key: 'reference', header: t('sec.reference'), cell: (secret) => <code>{`{{secrets.${secret.name}}}`}</code> },
              { key: 'updated', header: t('sec.updated'), cell: (secret) => formatDate(secret.updated_at) },
              confirmColumn<Secret>({
                label: t('sec.delete'),
                subject: (secret) => secret.name,
                question: (secret) => t('sec.deleteConfirm', { name: secret.name }),
                busy,
                onConfirm: (secret) => void act(() => api('DELETE', `/workspaces/${ws}/secrets/${encodeURIComponent(secret.name)}`)),
              }),
            ]}
          />
        )}
      </Loaded>
    </Page>
  );
}
