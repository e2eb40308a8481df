import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { useApp } from '../context';
import { Link, navigate } from '../router';
import { ErrorBox } from '../ui';

function nextPath(): string {
  const next = new URLSearchParams(location.search).get('next');
  // Only a path of this application, never another origin.
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/decisions';
}

export function SignIn() {
  const app = useApp();
  const { t } = app;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const reply = await api<{ session: { token: string } }>('POST', '/auth/sign-in', { email: form.get('email'), password: form.get('password') });
      app.signIn(reply.session.token);
      navigate(nextPath(), true);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card auth" onSubmit={(event) => void submit(event)} aria-labelledby="auth-title">
      <h1 id="auth-title">{t('auth.signIn')}</h1>
      {error !== null && <ErrorBox error={error} />}
      <label>
        <span>{t('auth.email')}</span>
        <input name="email" type="email" autoComplete="email" required />
      </label>
      <label>
        <span>{t('auth.password')}</span>
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {t('auth.signIn')}
      </button>
      <p>
        <Link href={`/sign-up${location.search}`}>{t('auth.noAccount')}</Link>
      </p>
    </form>
  );
}

export function SignUp() {
  const app = useApp();
  const { t } = app;
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
      {error !== null && <ErrorBox error={error} />}
      <label>
        <span>{t('auth.name')}</span>
        <input name="name" autoComplete="name" required />
      </label>
      <label>
        <span>{t('auth.email')}</span>
        <input name="email" type="email" autoComplete="email" required />
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
        <Link href="/sign-in">{t('auth.haveAccount')}</Link>
      </p>
    </form>
  );
}
