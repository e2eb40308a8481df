import { ReactNode, SelectHTMLAttributes, useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './lib/api';
import { useApp } from './context';
import type { MessageKey } from './lib/i18n';

/** What kind of failure an error is, to say what happened and what to do in words rather than in codes. */
function failureKind(error: ApiError | null): MessageKey {
  if (!error) return 'error.what.unknown';
  if (error.code === 'NETWORK') return 'error.NETWORK';
  if (error.status === 400 || error.status === 422) return 'error.what.invalid';
  if (error.status === 401) return 'error.what.session';
  if (error.status === 403) return 'error.what.forbidden';
  if (error.status === 404) return 'error.what.gone';
  if (error.status === 409) return 'error.what.conflict';
  if (error.status === 429) return 'error.what.busy';
  return 'error.what.server';
}

/**
 * Shows an error as people read it: what happened and what to do, then the API's own message and the fields it
 * named; its code and the request id to quote to support are under "Details".
 */
export function ErrorBox({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useApp();
  const apiError = error instanceof ApiError ? error : null;
  const message = apiError?.code === 'NETWORK' ? null : apiError ? apiError.message : String((error as Error)?.message ?? error);
  return (
    <div className="error" role="alert">
      <strong>{t(failureKind(apiError))}</strong>
      {message && <p>{message}</p>}
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
        <details className="muted small">
          <summary>{t('error.details')}</summary>
          {apiError.code}
          {apiError.status > 0 && ` (HTTP ${apiError.status})`}
          {apiError.requestId && (
            <>
              {' · '}
              {t('error.requestId')}: <code>{apiError.requestId}</code>
            </>
          )}
        </details>
      )}
      {onRetry && (
        <button type="button" onClick={onRetry}>
          {t('error.retry')}
        </button>
      )}
    </div>
  );
}

/** What the last action on a screen came to: its error, or the sentence that says it was done. */
export function Outcome({ error, message }: { error: unknown; message: ReactNode }) {
  return (
    <>
      {error !== null && <ErrorBox error={error} />}
      {message && (
        <p className="notice" role="status">
          {message}
        </p>
      )}
    </>
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

/**
 * A table that may scroll sideways on a narrow screen. The wrapper is a named, focusable region so that keyboard users
 * can scroll it too.
 */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export interface CursorPage<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * A list read a page at a time by cursor: `load(null)` starts again, `more()` appends the next page. A page
 * that comes back after the filters changed (a newer first page was asked for) is dropped, so a slow answer
 * never overwrites a fresher one.
 */
export function useCursorList<T extends { id: string }>(fetchPage: (cursor: string | null) => Promise<CursorPage<T>>, deps: unknown[]) {
  const [rows, setRows] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const generation = useRef(0);
  const fetcher = useRef(fetchPage);
  fetcher.current = fetchPage;

  const load = useCallback(async (from: string | null) => {
    const round = from === null ? ++generation.current : generation.current;
    setBusy(true);
    setError(null);
    try {
      const reply = await fetcher.current(from);
      if (round !== generation.current) return;
      setRows((current) => (from && current ? [...current, ...reply.data] : reply.data));
      setCursor(reply.has_more ? reply.next_cursor : null);
    } catch (failure) {
      if (round === generation.current) setError(failure);
    } finally {
      if (round === generation.current) setBusy(false);
    }
  }, []);

  useEffect(() => {
    setRows(null);
    void load(null);
  }, deps);

  const replace = useCallback((next: T) => setRows((current) => current?.map((row) => (row.id === next.id ? next : row)) ?? current), []);
  return { rows, error, busy, cursor, load, replace };
}

/** A status filter and a refresh button above a cursor list. */
export function ListToolbar({
  label,
  value,
  options,
  onChange,
  onRefresh,
  busy,
}: {
  label: string;
  value: string;
  options: Array<{ value: string; label: string }>;
  onChange: (value: string) => void;
  onRefresh: () => void;
  busy: boolean;
}) {
  const { t } = useApp();
  return (
    <div className="toolbar">
      <label className="field narrow">
        <span>{label}</span>
        <select value={value} onChange={(event) => onChange(event.target.value)}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </label>
      <button type="button" onClick={onRefresh} disabled={busy}>
        {t('ex.refresh')}
      </button>
    </div>
  );
}

/** The button under a list read a page at a time that reads the next page. */
export function MoreButton({ onMore, busy, label }: { onMore: () => void; busy: boolean; label?: string }) {
  const { t } = useApp();
  return (
    <button type="button" onClick={onMore} disabled={busy}>
      {label ?? t('ex.more')}
    </button>
  );
}

/** The states of a cursor list around its rows: the error, loading, empty, and the button for the next page. */
export function CursorListBody<T extends { id: string }>({
  list,
  empty,
  children,
}: {
  list: ReturnType<typeof useCursorList<T>>;
  empty: ReactNode;
  children: (rows: T[]) => ReactNode;
}) {
  const { rows, error, busy, cursor, load } = list;
  return (
    <>
      {error !== null && <ErrorBox error={error} onRetry={() => void load(null)} />}
      {rows === null ? error === null && <Loading /> : rows.length === 0 ? <Empty>{empty}</Empty> : children(rows)}
      {cursor && <MoreButton onMore={() => void load(cursor)} busy={busy} />}
    </>
  );
}

/**
 * A button for something that cannot be undone: the first press asks the question beside it, "yes" does it.
 * `subject` names the row for screen readers, so that a list of identical buttons stays tellable apart.
 */
export function ConfirmButton({
  label,
  subject,
  question,
  busy = false,
  onConfirm,
}: {
  label: string;
  subject: string;
  question: string;
  busy?: boolean;
  onConfirm: () => void;
}) {
  const { t } = useApp();
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" onClick={() => setAsking(true)}>
        {label} <span className="visually-hidden">{subject}</span>
      </button>
    );
  return (
    <span className="actions">
      <span>{question}</span>
      <button type="button" className="danger" disabled={busy} onClick={onConfirm}>
        {t('common.yes')}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        {t('common.no')}
      </button>
    </span>
  );
}

/**
 * A modal question (the browser's own `<dialog>`: focus stays inside, Escape cancels). `actions` are its buttons;
 * the first one that is not dangerous should be the safe choice.
 */
export function Dialog({ title, children, actions, onCancel }: { title: string; children?: ReactNode; actions: ReactNode; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancel = useRef(onCancel);
  cancel.current = onCancel;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (!dialog.open) dialog.showModal();
    const onEscape = (event: Event) => {
      event.preventDefault();
      cancel.current();
    };
    dialog.addEventListener('cancel', onEscape);
    return () => {
      dialog.removeEventListener('cancel', onEscape);
      if (dialog.open) dialog.close();
    };
  }, []);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="dialog-title">
      <h2 id="dialog-title">{title}</h2>
      {children}
      <div className="actions">{actions}</div>
    </dialog>
  );
}

/**
 * A yes/no question in a dialog. With `typed`, the confirming button stays disabled until the author typed that
 * word: for changes whose harm others feel (callers of a deployed decision).
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  danger = false,
  typed,
  busy = false,
  onConfirm,
  onCancel,
}: {
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  typed?: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { t } = useApp();
  const [entered, setEntered] = useState('');
  const ready = typed === undefined || entered.trim() === typed;
  return (
    <Dialog
      title={title}
      onCancel={onCancel}
      actions={
        <>
          <button type="button" onClick={onCancel} autoFocus={typed === undefined}>
            {t('common.cancel')}
          </button>
          <button type="button" className={danger ? 'danger' : 'primary'} disabled={!ready || busy} onClick={onConfirm}>
            {confirmLabel}
          </button>
        </>
      }
    >
      {children}
      {typed !== undefined && (
        <label className="field">
          <span>{t('common.typeToConfirm', { word: typed })}</span>
          <input value={entered} autoFocus autoComplete="off" spellCheck={false} onChange={(event) => setEntered(event.target.value)} />
        </label>
      )}
    </Dialog>
  );
}

/** The roles a workspace member can be given (the Owner's is handed over, never chosen). */
export function RoleSelect(props: Omit<SelectHTMLAttributes<HTMLSelectElement>, 'children'>) {
  return (
    <select {...props}>
      <option value="admin">admin</option>
      <option value="member">member</option>
      <option value="viewer">viewer</option>
      <option value="reviewer">reviewer</option>
    </select>
  );
}

/** A secret shown this once, with a copy button. */
export function OnceSecret({ label, value, id, note, onClose }: { label: string; value: string; id: string; note: string; onClose: () => void }) {
  const { t } = useApp();
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret" role="status">
      <p>{note}</p>
      <label className="field">
        <span>{label}</span>
        <input id={id} readOnly value={value} onFocus={(event) => event.target.select()} />
      </label>
      <div className="actions">
        <button
          type="button"
          onClick={() => {
            navigator.clipboard?.writeText(value).then(
              () => setCopied(true),
              () => setCopied(false),
            );
          }}
        >
          {copied ? t('common.copied') : t('common.copy')}
        </button>
        <button type="button" onClick={onClose}>
          {t('common.close')}
        </button>
      </div>
    </div>
  );
}

/** Renders loading and error states, and the content once the data is there. */
export function Loaded<T>({ value, reload, children }: { value: Async<T>; reload?: () => void; children: (data: T) => ReactNode }) {
  if (value.state === 'loading') return <Loading />;
  if (value.state === 'error') return <ErrorBox error={value.error} onRetry={reload} />;
  return <>{children(value.data)}</>;
}

/** A screen the member's role may not use: its title, and a note saying who may. */
export function RefusedPage({ title, note }: { title: string; note: string }) {
  return (
    <Page title={title}>
      <p className="notice">{note}</p>
    </Page>
  );
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
