import { FormEvent, ReactElement, useEffect, useState } from 'react';
import { api, ApiError, session } from '../lib/api';
import { AppState, useApp } from '../context';
import { acceptPath, authPathFor, invitationFrom, linkOriginElsewhere, sameAddress, unusableReason } from '../lib/invitation-links';
import { Link, navigate } from '../router';
import { ErrorBox, formatDate, Loaded, Loading, OnceSecret, Page, RoleSelect, useAction, useLoad } from '../ui';
import { confirmColumn, DataTable } from '../components/data-table';
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

type Role = 'admin' | 'member' | 'viewer' | 'reviewer';

/**
 * Sending invitations and the pending list, shared by the invitations card and the member form's "invite instead":
 * a link sent from either shows once in the card and the list reads again.
 */
export function useInvitations(ws: string, readable = true) {
  // Only Admins may read the pending list: for anyone else it is not asked for, rather than refused.
  const [pending, reload] = useLoad(
    () => (readable ? api<{ data: PendingInvitation[] }>('GET', `/workspaces/${ws}/invitations`) : Promise.resolve({ data: [] as PendingInvitation[] })),
    [ws, readable],
  );
  const [sent, setSent] = useState<SentInvitation | null>(null);
  const { busy, error, act } = useAction(reload);
  const send = (email: string, role: Role, afterwards?: () => void) =>
    act(async () => {
      setSent(await api<SentInvitation>('POST', `/workspaces/${ws}/invitations`, { email, role }));
      afterwards?.();
    });
  return { ws, pending, reload, sent, clearSent: () => setSent(null), send, busy, error, act };
}

export type InvitationsState = ReturnType<typeof useInvitations>;

/** Invitations of a workspace (Admin): send one, see its link once, and revoke what is still pending. */
export function Invitations({ invitations }: { invitations: InvitationsState }) {
  const { t } = useApp();
  const { ws, pending, reload, sent, clearSent, send, busy, error, act } = invitations;
  // Keyboard and screen-reader users land on the link they just made, wherever they sent it from.
  useEffect(() => {
    if (sent) document.getElementById('invitation-link')?.focus();
  }, [sent]);
  const elsewhere = sent ? linkOriginElsewhere(sent.url, location.href) : null;

  const invite = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    void send(String(data.get('invitee_email') ?? ''), data.get('invitee_role') as Role, () => form.reset());
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
          onClose={clearSent}
        />
      )}
      {elsewhere && <p className="notice">{t('inv.elsewhere', { link: elsewhere, here: location.origin })}</p>}
      <form className="inline-form" onSubmit={invite}>
        <label className="field">
          <span>{t('inv.email')}</span>
          <input name="invitee_email" type="email" autoComplete="off" required />
        </label>
        <label className="field">
          <span>{t('inv.role')}</span>
          <RoleSelect name="invitee_role" defaultValue="member" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('inv.send')}
        </button>
      </form>
      <Loaded value={pending} reload={reload}>
        {({ data }) => (
          <DataTable
            label={t('inv.pending')}
            className="invitations"
            rows={data}
            rowKey={(invitation) => invitation.id}
            empty={t('inv.none')}
            columns={[
              { key: 'email', header: t('mem.email'), cell: (invitation) => invitation.email },
              { key: 'role', header: t('mem.role'), cell: (invitation) => invitation.role },
              { key: 'expires', header: t('inv.expires'), cell: (invitation) => formatDate(invitation.expires_at) },
              confirmColumn<PendingInvitation>({
                header: t('inv.actions'),
                label: t('inv.revoke'),
                subject: (invitation) => invitation.email,
                question: (invitation) => t('inv.revokeConfirm', { email: invitation.email }),
                busy,
                onConfirm: (invitation) => void act(() => api('DELETE', `/workspaces/${ws}/invitations/${invitation.id}`)),
              }),
            ]}
          />
        )}
      </Loaded>
    </section>
  );
}

interface InvitationPreview {
  email: string;
  role: Role;
  workspace: { name: string };
  invited_by: { name: string | null; email: string | null };
  expires_at: string;
}

function useInvitationPreview(token: string | null) {
  return useLoad(
    () => (token ? api<InvitationPreview>('POST', '/invitations/preview', { token }) : Promise.reject(new ApiError(404, 'NOT_FOUND', '', null, null))),
    [token],
  );
}

function inviterOf(preview: InvitationPreview): string | null {
  const { name, email } = preview.invited_by;
  if (name && email) return `${name} (${email})`;
  return name ?? email;
}

/** Who asks whom to join what, as what, and until when. */
function InvitationFacts({ preview }: { preview: InvitationPreview }) {
  const { t } = useApp();
  const inviter = inviterOf(preview);
  return (
    <div className="stack invitation">
      <p className="invitation-lead">
        {inviter
          ? t('inv.lead', { inviter: preview.invited_by.name ?? inviter, workspace: preview.workspace.name })
          : t('inv.leadAnonymous', { workspace: preview.workspace.name })}
      </p>
      <dl className="facts">
        <dt>{t('inv.fact.workspace')}</dt>
        <dd>
          <strong>{preview.workspace.name}</strong>
        </dd>
        {inviter && (
          <>
            <dt>{t('inv.fact.inviter')}</dt>
            <dd>{inviter}</dd>
          </>
        )}
        <dt>{t('inv.fact.role')}</dt>
        <dd>
          <strong>{preview.role}</strong>
          <span className="muted"> · {t(`inv.role.${preview.role}`)}</span>
        </dd>
        <dt>{t('inv.fact.email')}</dt>
        <dd>{preview.email}</dd>
        <dt>{t('inv.fact.expires')}</dt>
        <dd>
          {formatDate(preview.expires_at)} <span className="muted">· {t('inv.once')}</span>
        </dd>
      </dl>
    </div>
  );
}

/** A link that cannot be used says why and what to do next, rather than failing at "Join". */
function UnusableInvitation({ error, signedIn }: { error: unknown; signedIn: boolean }) {
  const { t } = useApp();
  const reason = unusableReason(error instanceof ApiError ? error : null);
  if (!reason) return <ErrorBox error={error} />;
  return (
    <div className="stack" role="alert">
      <h2>{t('inv.unusableTitle')}</h2>
      <p>{t(`inv.unusable.${reason}`)}</p>
      <p>
        <Link className="button" href={signedIn ? '/workspaces' : '/sign-in'}>
          {t(signedIn ? 'inv.toWorkspaces' : 'inv.toSignIn')}
        </Link>
      </p>
    </div>
  );
}

/**
 * Where an invitation's link leads, signed in or not: it names the workspace, the inviter and the role. Signed out,
 * it offers sign-up and sign-in, each carrying the invitation so that finishing it joins; signed in with the invited
 * address, it joins.
 */
export function AcceptInvitation() {
  const app = useApp();
  const { t } = app;
  const token = invitationFrom(location.search, 'token');
  const [preview] = useInvitationPreview(token);
  return (
    <Page title={t('inv.acceptTitle')}>
      <div className="card stack">
        {preview.state === 'loading' && <Loading />}
        {preview.state === 'error' && <UnusableInvitation error={preview.error} signedIn={app.signedIn} />}
        {preview.state === 'ready' && token && (
          <>
            <InvitationFacts preview={preview.data} />
            {app.signedIn ? (
              <JoinAsSignedIn token={token} preview={preview.data} />
            ) : (
              <>
                <p>{t('inv.signedOutIntro', { email: preview.data.email })}</p>
                <div className="actions">
                  <Link className="button primary" href={authPathFor('sign-up', token)}>
                    {t('inv.signUpToJoin')}
                  </Link>
                  <Link className="button" href={authPathFor('sign-in', token)}>
                    {t('inv.signInToJoin')}
                  </Link>
                </div>
              </>
            )}
          </>
        )}
      </div>
    </Page>
  );
}

function JoinAsSignedIn({ token, preview }: { token: string; preview: InvitationPreview }) {
  const app = useApp();
  const { t } = app;
  const { busy, error, act } = useAction();
  // Where addresses can be verified, an unverified one cannot join: the code comes first, with the reason.
  const [account, reloadAccount] = useAccount();
  const current = account.state === 'ready' ? account.data.account.email : null;
  const wrongAccount = current !== null && !sameAddress(current, preview.email);
  const mustVerify = account.state === 'ready' && !wrongAccount && account.data.verificationOffered && !account.data.account.email_verified;

  const accept = () =>
    void act(async () => {
      const joined = await api<{ workspace: { id: string; name: string }; role: string }>('POST', '/invitations/accept', { token });
      await enterWorkspace(app, joined.workspace.id);
    });
  const switchAccount = () => {
    app.signOut();
    navigate(authPathFor('sign-in', token), true);
  };

  if (wrongAccount) {
    return (
      <>
        <p className="notice">{t('inv.wrongAccount', { current, email: preview.email })}</p>
        <div className="actions">
          <button type="button" className="primary" onClick={switchAccount}>
            {t('inv.switchAccount', { email: preview.email })}
          </button>
        </div>
      </>
    );
  }
  return (
    <>
      {error !== null && <ErrorBox error={error} />}
      {/* Verifying is the last step before joining, so it joins at once rather than asking for another click. */}
      {mustVerify && (
        <VerifyEmail
          email={account.data.account.email}
          onVerified={() => {
            reloadAccount();
            accept();
          }}
        />
      )}
      <div className="actions">
        <button type="button" className="primary" disabled={busy || account.state !== 'ready' || mustVerify} onClick={accept}>
          {t('inv.accept')}
        </button>
      </div>
    </>
  );
}

async function enterWorkspace(app: Pick<AppState, 'reloadWorkspaces' | 'chooseWorkspace'>, workspaceId: string): Promise<void> {
  await app.reloadWorkspaces();
  app.chooseWorkspace(workspaceId);
  navigate('/decisions', true);
}

/**
 * Finishing sign-in or sign-up opened from an invitation: join at once and land in the workspace. Joining is tried
 * before the application counts as signed in, so the screen never shows "no workspace yet" in between; when it
 * cannot join (the address must be verified first, another address), the invitation page says what is needed.
 */
export async function signInAndJoin(app: AppState, sessionToken: string, invitation: string): Promise<void> {
  session.set(sessionToken);
  let joined: string | null = null;
  try {
    joined = (await api<{ workspace: { id: string } }>('POST', '/invitations/accept', { token: invitation })).workspace.id;
  } catch {
    joined = null;
  }
  if (joined) app.chooseWorkspace(joined);
  app.signIn(sessionToken);
  navigate(joined ? '/decisions' : acceptPath(invitation), true);
}

/** On the sign-in and sign-up forms: what finishing them will join, and the invited address to fill in. */
export function useInvitationOnAuth(screen: 'sign-in' | 'sign-up'): { token: string | null; preview: InvitationPreview | null; banner: ReactElement | null } {
  const { t } = useApp();
  const token = invitationFrom(location.search, 'invitation');
  const [preview] = useInvitationPreview(token);
  if (!token) return { token: null, preview: null, banner: null };
  if (preview.state === 'error') return { token, preview: null, banner: <UnusableInvitation error={preview.error} signedIn={false} /> };
  if (preview.state !== 'ready') return { token, preview: null, banner: null };
  const inviter = preview.data.invited_by.name ?? preview.data.invited_by.email;
  const vars = { inviter: inviter ?? '', email: preview.data.email, workspace: preview.data.workspace.name, role: preview.data.role };
  return {
    token,
    preview: preview.data,
    banner: (
      <div className="notice stack">
        <p>{t(inviter ? 'inv.summary' : 'inv.summaryAnonymous', vars)}</p>
        <p>{t(screen === 'sign-up' ? 'inv.joinOnSignUp' : 'inv.joinOnSignIn', vars)}</p>
      </div>
    ),
  };
}
