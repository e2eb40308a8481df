import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { can, useApp } from '../context';
import { navigate } from '../router';
import { ApiError } from '../lib/api';
import { hasNoAccount } from '../lib/invitation-links';
import { ConfirmButton, ErrorBox, Loaded, Page, RoleSelect, useAction, useLoad } from '../ui';
import { DataTable } from '../components/data-table';
import { Invitations, useInvitations } from './invitations';

interface Member {
  user_id: string;
  email: string;
  name: string;
  role: string;
}

export function Members() {
  const app = useApp();
  const { t, workspace } = app;
  const ws = workspace!.id;
  const admin = can(workspace, 'admin');
  const owner = can(workspace, 'owner');
  const [members, reload] = useLoad(() => api<{ data: Member[] }>('GET', `/workspaces/${ws}/members`), [ws]);
  const { error, act } = useAction(reload);
  const invitations = useInvitations(ws, admin);
  // An address without an account cannot be added, but it can be invited: offered in place of the bare refusal.
  const [withoutAccount, setWithoutAccount] = useState<{ email: string; role: 'admin' | 'member' | 'viewer' | 'reviewer' } | null>(null);
  const handOver = (member: Member) =>
    act(async () => {
      await api('POST', `/workspaces/${ws}/ownership`, { user_id: member.user_id });
      // The caller is an Admin now: the shell and every screen must see the new role.
      await app.reloadWorkspaces();
    });
  const leave = () =>
    act(async () => {
      await api('POST', `/workspaces/${ws}/leave`);
      await backToWorkspaces(app);
    });
  const add = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const email = String(data.get('email') ?? '');
    const role = data.get('role') as 'admin' | 'member' | 'viewer' | 'reviewer';
    setWithoutAccount(null);
    await act(async () => {
      try {
        await api('POST', `/workspaces/${ws}/members`, { email, role });
      } catch (failure) {
        if (!(failure instanceof ApiError && hasNoAccount(failure))) throw failure;
        setWithoutAccount({ email, role });
        return;
      }
      form.reset();
    });
  };
  const inviteInstead = (person: { email: string; role: 'admin' | 'member' | 'viewer' | 'reviewer' }) =>
    void invitations.send(person.email, person.role, () => setWithoutAccount(null));
  return (
    <Page title={t('mem.title')}>
      {error !== null && <ErrorBox error={error} />}
      <Loaded value={members} reload={reload}>
        {({ data }) => (
          <DataTable
            label={t('mem.title')}
            rows={data}
            rowKey={(member) => member.user_id}
            columns={[
              { key: 'name', header: t('mem.name'), cell: (member) => member.name },
              { key: 'email', header: t('mem.email'), cell: (member) => member.email },
              {
                key: 'role',
                header: t('mem.role'),
                cell: (member) =>
                  admin && member.role !== 'owner' ? (
                    <RoleSelect
                      aria-label={t('mem.roleOf', { name: member.name })}
                      value={member.role}
                      onChange={(event) => void act(() => api('PUT', `/workspaces/${ws}/members/${member.user_id}`, { role: event.target.value }))}
                    />
                  ) : (
                    member.role
                  ),
              },
              {
                key: 'actions',
                header: t('mem.actions'),
                headerHidden: true,
                shown: admin,
                cell: (member) =>
                  member.role !== 'owner' && (
                    <span className="actions">
                      {owner && (
                        <ConfirmButton
                          label={t('mem.makeOwner')}
                          subject={member.name}
                          question={t('mem.makeOwnerConfirm', { name: member.name })}
                          onConfirm={() => void handOver(member)}
                        />
                      )}
                      <ConfirmButton
                        label={t('mem.remove')}
                        subject={member.name}
                        question={t('mem.removeConfirm', { name: member.name })}
                        onConfirm={() => void act(() => api('DELETE', `/workspaces/${ws}/members/${member.user_id}`))}
                      />
                    </span>
                  ),
              },
            ]}
          />
        )}
      </Loaded>
      {can(workspace, 'admin') && (
        <form className="card inline-form" onSubmit={(event) => void add(event)}>
          <h2>{t('mem.add')}</h2>
          <label className="field">
            <span>{t('mem.email')}</span>
            <input name="email" type="email" required aria-describedby="member-hint" />
            <small id="member-hint">{t('mem.addHint')}</small>
          </label>
          <label className="field">
            <span>{t('mem.role')}</span>
            <RoleSelect name="role" defaultValue="member" />
          </label>
          <button type="submit" className="primary">
            {t('mem.add')}
          </button>
          {withoutAccount && (
            <div className="notice stack" role="status">
              <p>{t('mem.noAccount', { email: withoutAccount.email })}</p>
              <div className="actions">
                <button type="button" className="primary" disabled={invitations.busy} onClick={() => inviteInstead(withoutAccount)}>
                  {t('mem.inviteInstead', withoutAccount)}
                </button>
              </div>
            </div>
          )}
        </form>
      )}
      <p className="muted" id="member-keys-note">
        {t('mem.keysNote')}
      </p>
      {admin && <Invitations invitations={invitations} />}
      <section className="card" aria-labelledby="leave-title">
        <h2 id="leave-title">{t('mem.leaveTitle')}</h2>
        {owner ? (
          <p>{t('mem.ownerLeaveIntro')}</p>
        ) : (
          <>
            <p>{t('mem.leaveIntro')}</p>
            <ConfirmButton label={t('mem.leave')} subject="" question={t('mem.leaveConfirm', { name: workspace!.name })} onConfirm={() => void leave()} />
          </>
        )}
      </section>
      {owner && <DeleteWorkspace ws={ws} name={workspace!.name} />}
    </Page>
  );
}

/** After the caller is no longer in the workspace: the list of those they are in. */
async function backToWorkspaces(app: { reloadWorkspaces(): Promise<unknown> }): Promise<void> {
  await app.reloadWorkspaces();
  navigate('/workspaces');
}

/** Deleting is final, so the Owner types the workspace's name first (as GitHub asks for a repository's). */
function DeleteWorkspace({ ws, name }: { ws: string; name: string }) {
  const app = useApp();
  const { t } = app;
  const [typed, setTyped] = useState('');
  const { busy, error, act } = useAction();
  const remove = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void act(async () => {
      await api('DELETE', `/workspaces/${ws}`);
      await backToWorkspaces(app);
    });
  };
  return (
    <form className="card inline-form" aria-labelledby="delete-title" onSubmit={remove}>
      <h2 id="delete-title">{t('mem.deleteTitle')}</h2>
      <p>{t('mem.deleteIntro')}</p>
      {error !== null && <ErrorBox error={error} />}
      <label className="field">
        <span>{t('mem.deleteType', { name })}</span>
        <input value={typed} onChange={(event) => setTyped(event.target.value)} autoComplete="off" />
      </label>
      <button type="submit" className="danger" disabled={busy || typed !== name}>
        {t('mem.delete')}
      </button>
    </form>
  );
}
