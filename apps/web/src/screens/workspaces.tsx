import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { useApp } from '../context';
import { navigate } from '../router';
import { Empty, ErrorBox, Page } from '../ui';

export function Workspaces() {
  const app = useApp();
  const { t } = app;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    setBusy(true);
    setError(null);
    try {
      const created = await api<{ id: string }>('POST', '/workspaces', { name: new FormData(form).get('name') });
      await app.reloadWorkspaces();
      app.chooseWorkspace(created.id);
      form.reset();
      navigate('/decisions');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title={t('ws.title')}>
      {app.workspaces && app.workspaces.length === 0 && <Empty>{t('ws.none')}</Empty>}
      {app.workspaces && app.workspaces.length > 0 && (
        <ul className="cards">
          {app.workspaces.map((workspace) => (
            <li key={workspace.id} className="card">
              <strong>{workspace.name}</strong>
              <span className="muted">
                {t('ws.role')}: {workspace.role}
              </span>
              <button
                type="button"
                onClick={() => {
                  app.chooseWorkspace(workspace.id);
                  navigate('/decisions');
                }}
              >
                {t('ws.open')} <span className="visually-hidden">{workspace.name}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <form className="card inline-form" onSubmit={(event) => void create(event)}>
        <h2>{t('ws.create')}</h2>
        {error !== null && <ErrorBox error={error} />}
        <label>
          <span>{t('ws.name')}</span>
          <input name="name" required maxLength={80} />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('ws.create')}
        </button>
      </form>
    </Page>
  );
}
