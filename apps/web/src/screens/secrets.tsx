import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { can, useApp } from '../context';
import { ConfirmButton, Empty, ErrorBox, formatDate, Loaded, Page, RefusedPage, useAction, useLoad } from '../ui';

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
      {error !== null && <ErrorBox error={error} />}
      {saved !== null && (
        <p className="notice" role="status">
          {t('sec.saved', { name: saved })}
        </p>
      )}
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
        {({ data }) =>
          data.length === 0 ? (
            <Empty>{t('sec.empty')}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="secrets">
                <thead>
                  <tr>
                    <th scope="col">{t('sec.name')}</th>
                    <th scope="col">{t('sec.reference')}</th>
                    <th scope="col">{t('sec.updated')}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t('sec.delete')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.map((secret) => (
                    <tr key={secret.name}>
                      <td>{secret.name}</td>
                      <td>
                        <code>{`{{secrets.${secret.name}}}`}</code>
                      </td>
                      <td>{formatDate(secret.updated_at)}</td>
                      <td>
                        <ConfirmButton
                          label={t('sec.delete')}
                          subject={secret.name}
                          question={t('sec.deleteConfirm', { name: secret.name })}
                          busy={busy}
                          onConfirm={() => void act(() => api('DELETE', `/workspaces/${ws}/secrets/${encodeURIComponent(secret.name)}`))}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </Page>
  );
}
