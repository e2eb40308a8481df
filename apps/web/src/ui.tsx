import { ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './lib/api';
import { useApp } from './context';

/** Shows an error as the API gave it: its message, its code and the request id to quote to support. */
export function ErrorBox({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useApp();
  const apiError = error instanceof ApiError ? error : null;
  const message = apiError?.code === 'NETWORK' ? t('error.NETWORK') : apiError ? apiError.message : String((error as Error)?.message ?? error);
  return (
    <div className="error" role="alert">
      <strong>{t('error.title')}</strong>
      <p>{message}</p>
      {apiError && apiError.issues.length > 0 && (
        <ul>
          {apiError.issues.map((issue, i) => (
            <li key={i}>
              <code>{issue.path || '(root)'}</code> {issue.message}
            </li>
          ))}
        </ul>
      )}
      {apiError && (
        <p className="muted small">
          {apiError.code}
          {apiError.requestId && (
            <>
              {' · '}
              {t('error.requestId')}: <code>{apiError.requestId}</code>
            </>
          )}
        </p>
      )}
      {onRetry && (
        <button type="button" onClick={onRetry}>
          {t('error.retry')}
        </button>
      )}
    </div>
  );
}

export function Loading() {
  const { t } = useApp();
  return (
    <p className="loading" role="status" aria-live="polite">
      {t('shell.loading')}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export type Async<T> = { state: 'loading' } | { state: 'error'; error: unknown } | { state: 'ready'; data: T };

/** Loads once per change of `deps`; `reload` fetches again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Async<T>, () => void, (data: T) => void] {
  const [value, setValue] = useState<Async<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const loader = useRef(load);
  loader.current = load;
  useEffect(() => {
    let live = true;
    setValue((current) => (current.state === 'ready' ? current : { state: 'loading' }));
    loader.current().then(
      (data) => live && setValue({ state: 'ready', data }),
      (error) => live && setValue({ state: 'error', error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  const set = useCallback((data: T) => setValue({ state: 'ready', data }), []);
  return [value, reload, set];
}

/**
 * What a button or a form sets off: `busy` while it runs, its error kept to show, `after` (a reload, say) once it
 * succeeded. `act` answers the work's result, or undefined when it failed; `refused` may claim a failure (and
 * show it its own way) instead of it being kept as the error.
 */
export function useAction(after?: () => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const act = useCallback(
    async <T,>(work: () => Promise<T>, refused?: (failure: unknown) => boolean): Promise<T | undefined> => {
      setBusy(true);
      setError(null);
      try {
        const result = await work();
        after?.();
        return result;
      } catch (failure) {
        if (!refused?.(failure)) setError(failure);
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [after],
  );
  return { busy, error, act };
}

/** Renders loading and error states, and the content once the data is there. */
export function Loaded<T>({ value, reload, children }: { value: Async<T>; reload?: () => void; children: (data: T) => ReactNode }) {
  if (value.state === 'loading') return <Loading />;
  if (value.state === 'error') return <ErrorBox error={value.error} onRetry={reload} />;
  return <>{children(value.data)}</>;
}

export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  useEffect(() => {
    document.title = title;
  }, [title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions && <div className="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}
