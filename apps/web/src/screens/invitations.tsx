import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { useApp } from '../context';
import { navigate } from '../router';
import { ConfirmButton, Empty, ErrorBox, formatDate, Loaded, OnceSecret, Page, useAction, useLoad } from '../ui';
import { useAccount, VerifyEmail } from './account';

interface PendingInvitation {
  id: string;
  email: string;
  role: string;
  expires_at: string;
}

interface SentInvitation extends PendingInvitation {
  url: string;
  emailed: boolean;
}

/** Invitations of a workspace (Admin): send one, see its link once, and revoke what is still pending. */
export function Invitations({ ws }: { ws: string }) {
  const { t } = useApp();
  const [pending, reload] = useLoad(() => api<{ data: PendingInvitation[] }>('GET', `/workspaces/${ws}/invitations`), [ws]);
  const [sent, setSent] = useState<SentInvitation | null>(null);
  const { busy, error, act } = useAction(reload);

  const invite = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    void act(async () => {
      setSent(await api<SentInvitation>('POST', `/workspaces/${ws}/invitations`, { email: data.get('invitee_email'), role: data.get('invitee_role') }));
      form.reset();
    });
  };

  return (
    <section className="card stack" aria-labelledby="invitations-title">
      <h2 id="invitations-title">{t('inv.title')}</h2>
      <p className="muted">{t('inv.intro')}</p>
      {error !== null && <ErrorBox error={error} />}
      {sent && (
        <OnceSecret
          label={t('inv.link', { email: sent.email })}
          value={sent.url}
          id="invitation-link"
          note={sent.emailed ? t('inv.emailed', { email: sent.email }) : t('inv.shown')}
          onClose={() => setSent(null)}
        />
      )}
      <form className="inline-form" onSubmit={invite}>
        <label className="field">
          <span>{t('inv.email')}</span>
          <input name="invitee_email" type="email" autoComplete="off" required />
        </label>
        <label className="field">
          <span>{t('inv.role')}</span>
          <select name="invitee_role" defaultValue="member">
            <option value="admin">admin</option>
            <option value="member">member</option>
            <option value="viewer">viewer</option>
          </select>
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('inv.send')}
        </button>
      </form>
      <Loaded value={pending} reload={reload}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty>{t('inv.none')}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="invitations">
                <caption className="visually-hidden">{t('inv.pending')}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t('mem.email')}</th>
                    <th scope="col">{t('mem.role')}</th>
                    <th scope="col">{t('inv.expires')}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t('inv.actions')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.map((invitation) => (
                    <tr key={invitation.id}>
                      <td>{invitation.email}</td>
                      <td>{invitation.role}</td>
                      <td>{formatDate(invitation.expires_at)}</td>
                      <td>
                        <ConfirmButton
                          label={t('inv.revoke')}
                          subject={invitation.email}
                          question={t('inv.revokeConfirm', { email: invitation.email })}
                          busy={busy}
                          onConfirm={() => void act(() => api('DELETE', `/workspaces/${ws}/invitations/${invitation.id}`))}
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
    </section>
  );
}

/** Where an invitation's link leads: the signed-in person joins the workspace with the invitation's role. */
export function AcceptInvitation() {
  const app = useApp();
  const { t } = app;
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const { busy, error, act } = useAction();
  // Where addresses can be verified, an unverified one cannot join: the code comes first, with the reason.
  const [account, reloadAccount] = useAccount();
  const mustVerify = account.state === 'ready' && account.data.verificationOffered && !account.data.account.email_verified;

  const accept = () =>
    void act(async () => {
      const joined = await api<{ workspace: { id: string; name: string }; role: string }>('POST', '/invitations/accept', { token });
      await app.reloadWorkspaces();
      app.chooseWorkspace(joined.workspace.id);
      navigate('/decisions', true);
    });

  return (
    <Page title={t('inv.acceptTitle')}>
      <div className="card stack">
        <p>{t('inv.acceptIntro')}</p>
        {error !== null && <ErrorBox error={error} />}
        {mustVerify && <VerifyEmail email={account.data.account.email} onVerified={reloadAccount} />}
        <div className="actions">
          <button type="button" className="primary" disabled={busy || token === '' || mustVerify} onClick={accept}>
            {t('inv.accept')}
          </button>
        </div>
      </div>
    </Page>
  );
}
