import { FormEvent, useEffect, useState } from 'react';
import { api } from '../lib/api';
import { useApp } from '../context';
import { Link, navigate } from '../router';
import { ErrorBox, useAction } from '../ui';
import { signInAndJoin, useInvitationOnAuth } from './invitations';

function nextPath(): string {
  const next = new URLSearchParams(location.search).get('next');
  // Only a path of this application, never another origin; without one, `/` lands where the role's home is.
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export function SignIn() {
  const app = useApp();
  const { t } = app;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [byCode, setByCode] = useState(false);
  const [codeSentTo, setCodeSentTo] = useState<string | null>(null);
  const [codesOffered, setCodesOffered] = useState(false);
  const [resetOffered, setResetOffered] = useState(false);
  const [resetting, setResetting] = useState(false);
  const invitation = useInvitationOnAuth('sign-in');
  useEffect(() => {
    let live = true;
    api<{ sign_in_code: boolean; password_reset: boolean }>('GET', '/auth/methods').then(
      (methods) => {
        if (!live) return;
        setCodesOffered(methods.sign_in_code);
        setResetOffered(methods.password_reset);
      },
      // Without the answer the password form is all there is.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);

  const attempt = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const signedIn = async (reply: { session: { token: string } }) => {
    if (invitation.token) return signInAndJoin(app, reply.session.token, invitation.token);
    app.signIn(reply.session.token);
    navigate(nextPath(), true);
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void attempt(async () => {
      if (!byCode) {
        await signedIn(await api<{ session: { token: string } }>('POST', '/auth/sign-in', { email: form.get('email'), password: form.get('password') }));
      } else if (codeSentTo === null) {
        const email = String(form.get('email') ?? '');
        await api('POST', '/auth/sign-in-codes', { email });
        setCodeSentTo(email);
      } else {
        await signedIn(await api<{ session: { token: string } }>('POST', '/auth/sign-in-codes/verify', { email: codeSentTo, code: form.get('code') }));
      }
    });
  };
  const switchTo = (code: boolean) => {
    setByCode(code);
    setCodeSentTo(null);
    setError(null);
  };
  if (resetting) return <ResetPassword onDone={(reply) => void signedIn(reply)} onBack={() => setResetting(false)} />;
  return (
    <form className="card auth" onSubmit={(event) => submit(event)} aria-labelledby="auth-title">
      <h1 id="auth-title">{t('auth.signIn')}</h1>
      {invitation.banner}
      {error !== null && <ErrorBox error={error} />}
      {codeSentTo === null ? (
        <label>
          <span>{t('auth.email')}</span>
          {/* Keyed by the invited address, which arrives after the first render, so that it fills the field. */}
          <input key={invitation.preview?.email ?? ''} name="email" type="email" autoComplete="email" defaultValue={invitation.preview?.email} required />
        </label>
      ) : (
        <p role="status">{t('auth.codeSent', { email: codeSentTo })}</p>
      )}
      {!byCode && (
        <label>
          <span>{t('auth.password')}</span>
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
      )}
      {byCode && codeSentTo !== null && (
        <label>
          <span>{t('auth.code')}</span>
          <input name="code" inputMode="numeric" pattern="[0-9]{6}" maxLength={6} autoComplete="one-time-code" required />
        </label>
      )}
      <button type="submit" className="primary" disabled={busy}>
        {byCode && codeSentTo === null ? t('auth.sendCode') : t('auth.signIn')}
      </button>
      {codesOffered && (
        <p>
          <button type="button" className="link" onClick={() => switchTo(!byCode)}>
            {byCode ? t('auth.usePassword') : t('auth.useCode')}
          </button>
        </p>
      )}
      {resetOffered && !byCode && (
        <p>
          <button type="button" className="link" onClick={() => setResetting(true)}>
            {t('auth.forgot')}
          </button>
        </p>
      )}
      <p>
        <Link href={`/sign-up${location.search}`}>{t('auth.noAccount')}</Link>
      </p>
    </form>
  );
}

/** A forgotten password: a code mailed to the address, then the code and a new password, which signs in. */
function ResetPassword({ onDone, onBack }: { onDone: (reply: { session: { token: string } }) => void; onBack: () => void }) {
  const { t } = useApp();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const { busy, error, act } = useAction();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void act(async () => {
      if (sentTo === null) {
        const email = String(form.get('email') ?? '');
        await api('POST', '/auth/password-resets', { email });
        setSentTo(email);
      } else {
        onDone(
          await api<{ session: { token: string } }>('POST', '/auth/password-resets/verify', {
            email: sentTo,
            code: form.get('code'),
            password: form.get('new_password'),
          }),
        );
      }
    });
  };
  return (
    <form className="card auth" onSubmit={submit} aria-labelledby="auth-title">
      <h1 id="auth-title">{t('auth.resetTitle')}</h1>
      {error !== null && <ErrorBox error={error} />}
      {sentTo === null ? (
        <label>
          <span>{t('auth.email')}</span>
          <input name="email" type="email" autoComplete="email" required />
        </label>
      ) : (
        <>
          <p role="status">{t('auth.resetSent', { email: sentTo })}</p>
          <label>
            <span>{t('auth.code')}</span>
            <input name="code" inputMode="numeric" pattern="[0-9]{6}" maxLength={6} autoComplete="one-time-code" required />
          </label>
          <label>
            <span>{t('auth.newPassword')}</span>
            <input
              name="new_password"
              type="password"
              autoComplete="new-password"
              minLength={10}
              maxLength={128}
              required
              aria-describedby="new-password-hint"
            />
            <small id="new-password-hint">
              {t('auth.passwordHint')} {t('auth.resetNote')}
            </small>
          </label>
        </>
      )}
      <button type="submit" className="primary" disabled={busy}>
        {sentTo === null ? t('auth.resetSend') : t('auth.resetDone')}
      </button>
      <p>
        <button type="button" className="link" onClick={onBack}>
          {t('auth.backToSignIn')}
        </button>
      </p>
    </form>
  );
}

export function SignUp() {
  const app = useApp();
  const { t } = app;
  const invitation = useInvitationOnAuth('sign-up');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const reply = await api<{ session: { token: string } }>('POST', '/auth/sign-up', {
        name: form.get('name'),
        email: form.get('email'),
        password: form.get('password'),
      });
      if (invitation.token) {
        await signInAndJoin(app, reply.session.token, invitation.token);
        return;
      }
      app.signIn(reply.session.token);
      navigate('/workspaces', true);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card auth" onSubmit={(event) => void submit(event)} aria-labelledby="auth-title">
      <h1 id="auth-title">{t('auth.signUp')}</h1>
      {invitation.banner}
      {error !== null && <ErrorBox error={error} />}
      <label>
        <span>{t('auth.name')}</span>
        <input name="name" autoComplete="name" required />
      </label>
      <label>
        <span>{t('auth.email')}</span>
        <input key={invitation.preview?.email ?? ''} name="email" type="email" autoComplete="email" defaultValue={invitation.preview?.email} required />
      </label>
      <label>
        <span>{t('auth.password')}</span>
        <input name="password" type="password" autoComplete="new-password" minLength={10} maxLength={128} required aria-describedby="password-hint" />
        <small id="password-hint">{t('auth.passwordHint')}</small>
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {t('auth.signUp')}
      </button>
      <p>
        <Link href={`/sign-in${location.search}`}>{t('auth.haveAccount')}</Link>
      </p>
    </form>
  );
}
