import { useEffect, useState } from 'react';
import { api, ApiError, DecisionDetails } from '../lib/api';
import { can, useApp } from '../context';
import { ErrorBox, formatDate, OnceSecret, Outcome, useAction, useLoad } from '../ui';

interface HookState {
  enabled: boolean;
  secret_set: boolean;
  enabled_at: string | null;
  changed_at: string | null;
  last_call_at: string | null;
}

/**
 * A decision's secret URL: its state (on or off, secret or none, last call) is read from the API; the URL itself
 * is shown once, when it is turned on or rotated, since the API keeps only the token's hash.
 */
export function SecretUrl({ decision }: { decision: DecisionDetails }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const member = can(workspace, 'member');
  const admin = can(workspace, 'admin');
  const base = `/workspaces/${ws}/decisions/${decision.id}/hook`;
  const [state, setState] = useState<'unknown' | 'on' | 'off'>('unknown');
  const [hasSecret, setHasSecret] = useState<boolean | null>(null);
  const [url, setUrl] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [facts, setFacts] = useState<HookState | null>(null);
  const readState = () => api<HookState>('GET', base);
  const [loaded, reloadState] = useLoad(readState, [base]);
  const { busy, error, act: run } = useAction(reloadState);

  // The API's read is the truth on load and after every change.
  useEffect(() => {
    if (loaded.state !== 'ready') return;
    setFacts(loaded.data);
    setState(loaded.data.enabled ? 'on' : 'off');
    setHasSecret(loaded.data.enabled ? loaded.data.secret_set : null);
  }, [loaded]);

  /** A refusal `onRefused` can explain is shown as a message, not as an error. */
  const act = async (work: () => Promise<string | null>, onRefused?: (failure: ApiError) => string | null) => {
    setMessage(null);
    const said = await run(work, (failure) => {
      const explained = failure instanceof ApiError && onRefused ? onRefused(failure) : null;
      if (explained) setMessage(explained);
      return Boolean(explained);
    });
    if (said !== undefined) setMessage(said);
  };

  const turnOn = () =>
    act(
      async () => {
        const reply = await api<{ url: string }>('POST', base);
        setUrl(reply.url);
        setState('on');
        setHasSecret(false);
        return t('hook.turnedOn');
      },
      (failure) => {
        if (failure.status !== 409 || failure.code !== 'CONFLICT') return null;
        setState('on');
        return t('hook.alreadyOn');
      },
    );

  const turnOff = () =>
    act(
      async () => {
        await api('DELETE', base);
        setState('off');
        setUrl(null);
        setSecret(null);
        setHasSecret(null);
        return t('hook.turnedOff');
      },
      (failure) => {
        if (failure.status !== 404 || failure.code !== 'NOT_FOUND') return null;
        setState('off');
        setUrl(null);
        return t('hook.alreadyOff');
      },
    );

  const whenOff = (failure: ApiError) => {
    if (failure.status !== 409 || failure.code !== 'CONFLICT') return null;
    setState('off');
    return t('hook.offFirst');
  };

  const rotate = () =>
    act(async () => {
      const reply = await api<{ url: string }>('POST', `${base}/rotate`);
      setUrl(reply.url);
      setState('on');
      return t('hook.rotated');
    }, whenOff);

  const createSecret = () =>
    act(async () => {
      const reply = await api<{ secret: string }>('POST', `${base}/secret`);
      setSecret(reply.secret);
      setHasSecret(true);
      setState('on');
      return null;
    }, whenOff);

  const removeSecret = () =>
    act(
      async () => {
        await api('DELETE', `${base}/secret`);
        setHasSecret(false);
        setSecret(null);
        return t('hook.secretRemoved');
      },
      (failure) => {
        if (failure.status !== 404 || failure.code !== 'NOT_FOUND') return null;
        setHasSecret(false);
        return t('hook.noSecret');
      },
    );

  return (
    <div className="stack">
      <section className="card" aria-labelledby="hook-title">
        <h2 id="hook-title">{t('hook.title')}</h2>
        <p>{t('hook.intro')}</p>
        <p className="muted small">{t('hook.shownOnce')}</p>
        <Outcome error={error} message={message} />
        {loaded.state === 'error' && <ErrorBox error={loaded.error} onRetry={reloadState} />}
        <p>
          {t('hook.state')}: <strong data-testid="hook-state">{t(`hook.state.${state}`)}</strong>
          {facts?.enabled && facts.enabled_at && <span className="muted small"> · {t('hook.since', { when: formatDate(facts.enabled_at) })}</span>}
        </p>
        {facts && (
          <p data-testid="hook-last-call">
            {t('hook.lastCall')}: {facts.last_call_at ? formatDate(facts.last_call_at) : t('hook.neverCalled')}
          </p>
        )}
        {url && <OnceSecret label={t('hook.url')} value={url} id="hook-url" note={t('hook.urlShown')} onClose={() => setUrl(null)} />}
        <div className="actions">
          <button type="button" className="primary" disabled={!member || busy || state === 'on'} onClick={() => void turnOn()}>
            {t('hook.turnOn')}
          </button>
          <button type="button" className="danger" disabled={!member || busy || state === 'off'} onClick={() => void turnOff()}>
            {t('hook.turnOff')}
          </button>
          <button type="button" disabled={!admin || busy || state === 'off'} aria-describedby="hook-rotate-hint" onClick={() => void rotate()}>
            {t('hook.rotate')}
          </button>
        </div>
        <small id="hook-rotate-hint">{t('hook.rotateHint')}</small>
        {!member && <p className="muted small">{t('error.forbidden')}</p>}
      </section>
      <section className="card" aria-labelledby="hook-secret-title">
        <h2 id="hook-secret-title">{t('hook.secret')}</h2>
        <p>{t('hook.secretIntro')}</p>
        {secret && <OnceSecret label={t('hook.secret')} value={secret} id="hook-secret" note={t('hook.secretShown')} onClose={() => setSecret(null)} />}
        {hasSecret !== null && (
          <p>
            {t('hook.secretState')}: <strong>{t(hasSecret ? 'hook.secretState.set' : 'hook.secretState.none')}</strong>
          </p>
        )}
        <div className="actions">
          <button type="button" disabled={!admin || busy || state === 'off'} onClick={() => void createSecret()}>
            {hasSecret ? t('hook.replaceSecret') : t('hook.createSecret')}
          </button>
          <button type="button" className="danger" disabled={!admin || busy || state === 'off' || hasSecret === false} onClick={() => void removeSecret()}>
            {t('hook.removeSecret')}
          </button>
        </div>
        {member && !admin && <p className="muted small">{t('hook.adminOnly')}</p>}
      </section>
    </div>
  );
}
