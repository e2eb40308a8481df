import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { useApp } from '../context';
import type { MessageKey } from '../lib/i18n';
import { ConfirmButton, ErrorBox, formatDate, Loaded, Page, useAction, useLoad } from '../ui';
import { DataTable } from '../components/data-table';
import { describeDevice } from '../lib/user-agent';
import { formatTimeAgo } from '../lib/relative-time';

export interface Account {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  has_password: boolean;
}

interface SessionRow {
  id: string;
  method: 'sign_up' | 'password' | 'sign_in_code' | 'password_reset';
  user_agent: string | null;
  /** Where the gateway saw the sign-in come from; null for sessions opened before it was kept. */
  address: string | null;
  created_at: string;
  last_active_at: string | null;
  expires_at: string;
  current: boolean;
}

/** The signed-in account, and whether this installation can verify addresses at all (only where it sends e-mail). */
export function useAccount() {
  return useLoad(async () => {
    const [account, methods] = await Promise.all([api<Account>('GET', '/auth/account'), api<{ email_verification: boolean }>('GET', '/auth/methods')]);
    return { account, verificationOffered: methods.email_verification };
  }, []);
}

/**
 * Asks for the code mailed to the account's address and says why: an unproven address cannot join workspaces or own
 * a paid plan. `onVerified` runs once the address is proven.
 */
export function VerifyEmail({ email, onVerified }: { email: string; onVerified: () => void }) {
  const { t } = useApp();
  const [sent, setSent] = useState(false);
  const { busy, error, act } = useAction();
  const send = () =>
    void act(async () => {
      await api('POST', '/auth/email-verification');
      setSent(true);
    });
  const verify = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const code = new FormData(event.currentTarget).get('verification_code');
    void act(async () => {
      await api('POST', '/auth/email-verification/verify', { code });
      onVerified();
    });
  };
  return (
    <section className="card stack notice-card" aria-labelledby="verify-title">
      <h2 id="verify-title">{t('acct.verifyTitle')}</h2>
      <p>{t('acct.verifyWhy', { email })}</p>
      {error !== null && <ErrorBox error={error} />}
      {sent ? (
        <form className="inline-form" onSubmit={verify}>
          <p role="status">{t('acct.verifySent', { email })}</p>
          <label className="field">
            <span>{t('acct.verifyCode')}</span>
            <input name="verification_code" inputMode="numeric" pattern="[0-9]{6}" maxLength={6} autoComplete="one-time-code" required />
          </label>
          <button type="submit" className="primary" disabled={busy}>
            {t('acct.verify')}
          </button>
          <button type="button" disabled={busy} onClick={send}>
            {t('acct.verifyResend')}
          </button>
        </form>
      ) : (
        <div className="actions">
          <button type="button" className="primary" disabled={busy} onClick={send}>
            {t('acct.verifySend')}
          </button>
        </div>
      )}
    </section>
  );
}

/** Sessions shown before "Show all": an account signed in from many places keeps its list short. */
const SESSIONS_SHOWN = 5;

/** The newest sessions, this one always among them. */
function newestSessions(rows: SessionRow[], shown: number): SessionRow[] {
  const newest = [...rows].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const kept = newest.slice(0, shown);
  const current = rows.find((row) => row.current);
  if (current && !kept.includes(current)) kept[kept.length - 1] = current;
  return kept;
}

/** The account's address and its verification, and every session: end one, or all but this one. */
export function AccountPage() {
  const { t, locale } = useApp();
  const [state, reloadAccount] = useAccount();
  const [sessions, reloadSessions] = useLoad(() => api<{ data: SessionRow[] }>('GET', '/auth/sessions'), []);
  const [notice, setNotice] = useState<string | null>(null);
  const [allSessions, setAllSessions] = useState(false);
  const { busy, error, act } = useAction(reloadSessions);
  const endOthers = () =>
    void act(async () => {
      const { revoked } = await api<{ revoked: number }>('POST', '/auth/sessions/revoke-others');
      setNotice(t('acct.endedOthers', { count: revoked }));
    });
  return (
    <Page title={t('acct.title')}>
      <Loaded value={state} reload={reloadAccount}>
        {({ account, verificationOffered }) => (
          <>
            <section className="card stack" aria-labelledby="account-email">
              <h2 id="account-email">{t('acct.email')}</h2>
              <p>
                {account.email} — <strong>{account.email_verified ? t('acct.verified') : t('acct.unverified')}</strong>
              </p>
              {!account.has_password && <p className="muted">{t('acct.noPassword')}</p>}
            </section>
            {verificationOffered && !account.email_verified && (
              <VerifyEmail
                email={account.email}
                onVerified={() => {
                  setNotice(t('acct.verifiedNow'));
                  reloadAccount();
                  reloadSessions();
                }}
              />
            )}
          </>
        )}
      </Loaded>
      {notice !== null && (
        <p role="status" className="notice">
          {notice}
        </p>
      )}
      <section className="card stack" aria-labelledby="sessions-title">
        <h2 id="sessions-title">{t('acct.sessions')}</h2>
        <p className="muted">{t('acct.sessionsIntro')}</p>
        {error !== null && <ErrorBox error={error} />}
        <Loaded value={sessions} reload={reloadSessions}>
          {({ data }) => (
            <>
              <DataTable
                label={t('acct.sessions')}
                className="sessions"
                rows={allSessions ? data : newestSessions(data, SESSIONS_SHOWN)}
                rowKey={(row) => row.id}
                columns={[
                  { key: 'started', header: t('acct.started'), cell: (row) => formatDate(row.created_at) },
                  { key: 'method', header: t('acct.method'), cell: (row) => t(`acct.method.${row.method}` as MessageKey) },
                  {
                    key: 'device',
                    header: t('acct.device'),
                    className: 'wrap',
                    cell: (row) => {
                      const lastActive = formatTimeAgo(row.last_active_at, new Date(), locale);
                      const whereAndWhen = [lastActive === null ? null : t('acct.lastActive', { when: lastActive }), row.address].filter(
                        (part): part is string => part !== null,
                      );
                      return (
                        <>
                          <span title={row.user_agent ?? undefined}>
                            {describeDevice(row.user_agent, {
                              on: (browser, system) => t('acct.deviceOn', { browser, system }),
                              unknown: t('acct.unknownDevice'),
                            })}
                          </span>
                          {whereAndWhen.length > 0 && <span className="muted small session-activity">{whereAndWhen.join(' · ')}</span>}
                        </>
                      );
                    },
                  },
                  { key: 'expires', header: t('acct.expires'), cell: (row) => formatDate(row.expires_at) },
                  {
                    key: 'end',
                    header: t('mem.actions'),
                    headerHidden: true,
                    cell: (row) =>
                      row.current ? (
                        <strong>{t('acct.current')}</strong>
                      ) : (
                        <ConfirmButton
                          label={t('acct.end')}
                          subject={formatDate(row.created_at)}
                          question={t('acct.endConfirm')}
                          busy={busy}
                          onConfirm={() => void act(() => api('DELETE', `/auth/sessions/${row.id}`))}
                        />
                      ),
                  },
                ]}
              />
              {data.length > SESSIONS_SHOWN && (
                <p className="muted">
                  {allSessions ? t('acct.sessionsAll', { count: data.length }) : t('acct.sessionsNewest', { shown: SESSIONS_SHOWN, count: data.length })}{' '}
                  <button type="button" className="link" onClick={() => setAllSessions(!allSessions)} aria-expanded={allSessions}>
                    {allSessions ? t('acct.showNewest', { shown: SESSIONS_SHOWN }) : t('acct.showAll', { count: data.length })}
                  </button>
                </p>
              )}
              {data.some((row) => !row.current) && (
                <div className="actions">
                  <ConfirmButton label={t('acct.endOthers')} subject="" question={t('acct.endOthersConfirm')} busy={busy} onConfirm={endOthers} />
                </div>
              )}
            </>
          )}
        </Loaded>
      </section>
    </Page>
  );
}
