import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { can, useApp } from '../context';
import { ErrorBox, formatDate, Loaded, OnceSecret, Page, RefusedPage, useAction, useLoad } from '../ui';
import { confirmColumn, DataTable } from '../components/data-table';

interface Key {
  id: string;
  name: string;
  mode: 'live' | 'test';
  /** `svc_live_…Zo1f`; null for keys made before their last characters were kept. */
  hint: string | null;
  created_at: string;
  last_used_at: string | null;
}

export function ApiKeys() {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const admin = can(workspace, 'admin');
  const [keys, reload] = useLoad(
    () => (admin ? api<{ data: Key[] }>('GET', `/workspaces/${ws}/api-keys`) : Promise.resolve({ data: [] as Key[] })),
    [ws, admin],
  );
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const { busy, error, act } = useAction(reload);

  const create = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    void act(async () => {
      const reply = await api<{ name: string; key: string }>('POST', `/workspaces/${ws}/api-keys`, { name: data.get('name'), mode: data.get('mode') });
      setCreated(reply);
      form.reset();
    });
  };

  if (!admin) return <RefusedPage title={t('keys.title')} note={t('keys.adminOnly')} />;
  return (
    <Page title={t('keys.title')}>
      {error !== null && <ErrorBox error={error} />}
      {created && <OnceSecret label={created.name} value={created.key} id="created-key" note={t('keys.shown')} onClose={() => setCreated(null)} />}
      <form className="card inline-form" onSubmit={create}>
        <h2>{t('keys.create')}</h2>
        <label className="field">
          <span>{t('keys.name')}</span>
          <input name="name" required maxLength={100} />
        </label>
        <label className="field">
          <span>{t('keys.mode')}</span>
          <select name="mode" defaultValue="test">
            <option value="test">test</option>
            <option value="live">live</option>
          </select>
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('keys.create')}
        </button>
      </form>
      <p className="muted small">{t('keys.modes')}</p>
      <Loaded value={keys} reload={reload}>
        {({ data }) => (
          <DataTable
            label={t('keys.title')}
            rows={data}
            rowKey={(key) => key.id}
            empty={t('keys.empty')}
            columns={[
              {
                key: 'name',
                header: t('keys.name'),
                cell: (key) => (
                  <>
                    {key.name}
                    <div className="muted small">
                      <code className="key-hint">{key.hint ?? key.id}</code>
                    </div>
                  </>
                ),
              },
              { key: 'mode', header: t('keys.mode'), cell: (key) => t(key.mode === 'live' ? 'keys.mode.live' : 'keys.mode.test') },
              { key: 'created', header: t('keys.created'), cell: (key) => formatDate(key.created_at) },
              { key: 'used', header: t('keys.lastUsed'), cell: (key) => formatDate(key.last_used_at) },
              confirmColumn<Key>({
                label: t('keys.revoke'),
                subject: (key) => key.name,
                question: (key) => t('keys.revokeConfirm', { name: key.name }),
                busy,
                onConfirm: (key) => void act(() => api('DELETE', `/workspaces/${ws}/api-keys/${key.id}`)),
              }),
            ]}
          />
        )}
      </Loaded>
    </Page>
  );
}
