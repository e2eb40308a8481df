import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api } from '../lib/api';
import { useApp } from '../context';
import type { MessageKey } from '../lib/i18n';
import { reasonMessage } from '../lib/reasons';
import {
  afterLeaving,
  AnswerToJudge,
  claimLeft,
  dueTone,
  initialDraft,
  moveField,
  OutcomeValue,
  outcomeText,
  pickOption,
  resolutionBody,
  reviewCommand,
  ReviewCommand,
  ReviewDraft,
  reviewFields,
  setField,
  spanText,
  stepItem,
} from '../lib/reviews';
import { ErrorBox, formatDate, Loaded, Loading, Page, TableWrap, useCursorList, useLoad } from '../ui';
import { DataTable } from '../components/data-table';
import { ExecutionTrace, TraceTable } from './trace';

/** An item as the list shows it (`GET …/reviews`, docs/reviews.md). */
interface ReviewSummary {
  id: string;
  status: 'open' | 'claimed' | 'expired' | 'resolved';
  reason: 'action' | 'low_confidence' | 'engine_error' | 'audit';
  decision_id: string;
  decision: string;
  version: number;
  execution_id: string;
  action: string | null;
  action_reason: Record<string, unknown> | null;
  executed_at: string;
  due_at: string;
  claimed_by: string | null;
  claim_expires_at: string | null;
  resolved_at: string | null;
  resolved_by: string | null;
  resolution: { answers: Record<string, OutcomeValue>; action: string | null; note: string | null } | null;
}

interface ReviewDetail extends ReviewSummary {
  state: unknown;
  answers: Array<AnswerToJudge & { confidence: number | null; distribution: Record<string, number> | null }>;
  trace: ExecutionTrace | null;
  error: unknown;
}

const STATUSES = ['open', 'claimed', 'expired', 'resolved'] as const;
const REASONS = ['action', 'low_confidence', 'engine_error', 'audit'] as const;

/** Where a key was pressed, for `reviewCommand`: typing, on a control that has its own Enter and arrows, or neither. */
function focusKind(target: EventTarget | null): 'text' | 'control' | 'none' {
  const element = target as HTMLElement | null;
  if (!element || !element.tagName) return 'none';
  const tag = element.tagName.toLowerCase();
  if (tag === 'textarea' || tag === 'select' || (tag === 'input' && (element as HTMLInputElement).type !== 'radio') || element.isContentEditable) return 'text';
  if (tag === 'button' || tag === 'a' || tag === 'summary' || tag === 'input') return 'control';
  return 'none';
}

/** The inbox's keys, read from the whole page while the screen is open; `handle` answers whether it took the key. */
function useReviewKeys(handle: (command: ReviewCommand, target: EventTarget | null) => boolean) {
  const handler = useRef(handle);
  handler.current = handle;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || document.querySelector('dialog[open]')) return;
      const command = reviewCommand(event, focusKind(event.target));
      if (command && handler.current(command, event.target)) event.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

/** The clock, read again every `ms`. */
function useNow(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

function percent(value: number | null | undefined): string {
  return typeof value === 'number' ? `${(value * 100).toFixed(1)} %` : '—';
}

function DueBadge({ item, now }: { item: ReviewSummary; now: number }) {
  const { t } = useApp();
  const tone = dueTone(item.due_at, now, item.status === 'resolved');
  const span = spanText(Date.parse(item.due_at) - now);
  const text = tone === 'done' ? t('rv.due.done') : tone === 'overdue' ? t('rv.due.overdue', { span }) : t('rv.due.in', { span });
  return (
    <span className={`badge due-${tone}`} title={formatDate(item.due_at)}>
      {text}
    </span>
  );
}

/**
 * The reviewer's inbox (docs/reviews.md, "Inbox"): the queue, oldest due first, with its filters, beside the chosen
 * item. Keyboard first: j/k or the arrows move through the queue, digits answer, Enter resolves, Escape releases.
 */
export function Reviews() {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [status, setStatus] = useState('');
  const [reason, setReason] = useState('');
  const [decision, setDecision] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState('');
  // Resolved items leave a queue of unresolved ones at once rather than at the next load.
  const [left, setLeft] = useState<ReadonlySet<string>>(new Set());
  const [me] = useLoad(() => api<{ id: string }>('GET', '/auth/account'), []);
  const now = useNow(30_000);
  const decisionsSeen = useRef(new Map<string, string>());

  const list = useCursorList<ReviewSummary>(
    (cursor) => {
      const query = new URLSearchParams({ limit: '50' });
      if (status) query.set('status', status);
      if (reason) query.set('reason', reason);
      if (decision) query.set('decision_id', decision);
      if (cursor) query.set('cursor', cursor);
      return api('GET', `/workspaces/${ws}/reviews?${query}`);
    },
    [ws, status, reason, decision],
  );

  const rows = useMemo(() => (list.rows ?? []).filter((row) => !left.has(row.id)), [list.rows, left]);
  const ids = useMemo(() => rows.map((row) => row.id), [rows]);
  for (const row of rows) decisionsSeen.current.set(row.decision_id, row.decision);

  // A fresh list starts at its first item, and a chosen item that left it gives way to the first.
  useEffect(() => {
    if (list.rows !== null && (selected === null || !ids.includes(selected))) setSelected(ids[0] ?? null);
  }, [ids, list.rows, selected]);

  // The item after the chosen one is read ahead, so that moving on (or resolving) answers at once; an item read
  // ahead is used once, and read afresh when the reviewer comes back to it.
  const ahead = useRef(new Map<string, Promise<ReviewDetail>>());
  const readItem = useCallback(
    (id: string, keep: boolean) => {
      const path = `/workspaces/${ws}/reviews/${id}`;
      let read = ahead.current.get(path);
      if (!read) {
        read = api<ReviewDetail>('GET', path);
        read.catch(() => ahead.current.delete(path));
      }
      if (keep) ahead.current.set(path, read);
      else ahead.current.delete(path);
      return read;
    },
    [ws],
  );
  useEffect(() => {
    const next = selected === null ? null : stepItem(ids, selected, 1);
    if (next !== null && next !== selected) readItem(next, true).catch(() => undefined);
  }, [ids, selected, readItem]);

  const say = useCallback((text: string) => setAnnouncement(text), []);
  const position = selected ? ids.indexOf(selected) : -1;
  const current = position >= 0 ? rows[position]! : null;

  const choose = useCallback(
    (id: string | null) => {
      setSelected(id);
      const row = rows.find((candidate) => candidate.id === id);
      if (row)
        say(t('rv.say.item', { n: ids.indexOf(row.id) + 1, total: ids.length, decision: row.decision, reason: t(`rv.reason.${row.reason}` as MessageKey) }));
    },
    [rows, ids, say, t],
  );

  useReviewKeys((command) => {
    if (command.type !== 'next' && command.type !== 'previous') return false;
    if (ids.length === 0) return false;
    choose(stepItem(ids, selected, command.type === 'next' ? 1 : -1));
    return true;
  });

  const onResolved = useCallback(
    (id: string, text: string) => {
      const next = status === 'resolved' ? id : afterLeaving(ids, id);
      if (status !== 'resolved') setLeft((gone) => new Set(gone).add(id));
      setSelected(next);
      const row = rows.find((candidate) => candidate.id === next);
      say(next && next !== id && row ? `${text} ${t('rv.say.next', { decision: row.decision })}` : `${text} ${t('rv.say.empty')}`);
    },
    [ids, rows, status, say, t],
  );

  const filter = (set: (value: string) => void) => (event: { target: { value: string } }) => {
    setLeft(new Set());
    set(event.target.value);
  };

  return (
    <Page
      title={t('rv.title')}
      actions={
        <button type="button" onClick={() => void list.load(null)} disabled={list.busy}>
          {t('common.refresh')}
        </button>
      }
    >
      <p className="visually-hidden" role="status" aria-live="polite" aria-atomic="true" data-testid="rv-live">
        {announcement}
      </p>
      <div className="toolbar">
        <label className="field narrow">
          <span>{t('rv.status')}</span>
          <select value={status} onChange={filter(setStatus)}>
            <option value="">{t('rv.status.unresolved')}</option>
            {STATUSES.map((value) => (
              <option key={value} value={value}>
                {t(`rv.status.${value}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
        <label className="field narrow">
          <span>{t('rv.decision')}</span>
          <select value={decision} onChange={filter(setDecision)}>
            <option value="">{t('rv.decision.all')}</option>
            {[...decisionsSeen.current].map(([id, name]) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label className="field narrow">
          <span>{t('rv.reason')}</span>
          <select value={reason} onChange={filter(setReason)}>
            <option value="">{t('rv.reason.all')}</option>
            {REASONS.map((value) => (
              <option key={value} value={value}>
                {t(`rv.reason.${value}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p className="muted small review-keys" id="rv-keys">
        <kbd>j</kbd>/<kbd>k</kbd> {t('rv.keys.move')} · <kbd>1</kbd>–<kbd>9</kbd> {t('rv.keys.pick')} · <kbd>h</kbd>/<kbd>l</kbd> {t('rv.keys.field')} ·{' '}
        <kbd>Enter</kbd> {t('rv.keys.resolve')} · <kbd>Esc</kbd> {t('rv.keys.release')} · <kbd>c</kbd> {t('rv.keys.claim')} · <kbd>n</kbd> {t('rv.keys.note')}
      </p>
      <div className="review-inbox">
        <div className="review-queue">
          {list.error !== null && <ErrorBox error={list.error} onRetry={() => void list.load(null)} />}
          {list.rows === null ? (
            list.error === null && <Loading />
          ) : (
            <DataTable
              label={t('rv.queue')}
              rows={rows}
              rowKey={(row) => row.id}
              empty={t('rv.empty')}
              testId="rv-queue"
              rowClassName={(row) => (row.id === selected ? 'selected' : undefined)}
              paging={{ more: () => void list.load(list.cursor), hasMore: list.cursor !== null, busy: list.busy }}
              columns={[
                {
                  key: 'item',
                  header: t('rv.item'),
                  rowHeader: true,
                  cell: (row) => (
                    <button type="button" className="link" aria-current={row.id === selected ? 'true' : undefined} onClick={() => choose(row.id)}>
                      {t('rv.itemName', { decision: row.decision, version: row.version })}
                    </button>
                  ),
                },
                { key: 'reason', header: t('rv.reason'), cell: (row) => t(`rv.reason.${row.reason}` as MessageKey) },
                { key: 'action', header: t('rv.action'), cell: (row) => row.action ?? '—' },
                { key: 'due', header: t('rv.due'), cell: (row) => <DueBadge item={row} now={now} /> },
                { key: 'status', header: t('rv.status'), cell: (row) => t(`rv.status.${row.status}` as MessageKey) },
              ]}
            />
          )}
        </div>
        {current && (
          <ReviewItem
            key={current.id}
            ws={ws}
            id={current.id}
            read={readItem}
            me={me.state === 'ready' ? me.data.id : null}
            label={t('rv.position', { n: position + 1, total: ids.length })}
            say={say}
            onResolved={onResolved}
            onChanged={list.replace}
          />
        )}
      </div>
    </Page>
  );
}

/** The claim's time left, ticking each second; said once by the live region when it lapses. */
function ClaimTimer({ expiresAt, onLapse }: { expiresAt: string; onLapse: () => void }) {
  const { t } = useApp();
  const now = useNow(1000);
  const left = claimLeft(expiresAt, now);
  const lapsed = left === null;
  const lapse = useRef(onLapse);
  lapse.current = onLapse;
  useEffect(() => {
    if (lapsed) lapse.current();
  }, [lapsed]);
  return (
    <span className="badge claim-timer" data-testid="rv-claim-timer">
      {left === null ? t('rv.claim.lapsed') : t('rv.claim.mine', { left })}
    </span>
  );
}

function ReviewItem({
  ws,
  id,
  read,
  me,
  label,
  say,
  onResolved,
  onChanged,
}: {
  ws: string;
  id: string;
  read: (id: string, keep: boolean) => Promise<ReviewDetail>;
  me: string | null;
  label: string;
  say: (text: string) => void;
  onResolved: (id: string, text: string) => void;
  onChanged: (item: ReviewSummary) => void;
}) {
  const { t } = useApp();
  const path = `/workspaces/${ws}/reviews/${id}`;
  const first = useRef(true);
  const [detail, reload, setDetail] = useLoad(() => {
    // Only the first read may be the one made ahead; "Try again" reads afresh.
    const reading = first.current ? read(id, false) : api<ReviewDetail>('GET', path);
    first.current = false;
    return reading;
  }, [path]);
  const [draft, setDraft] = useState<ReviewDraft | null>(null);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const noteRef = useRef<HTMLTextAreaElement>(null);
  const item = detail.state === 'ready' ? detail.data : null;
  const fields = useMemo(() => (item ? reviewFields(item.answers) : []), [item]);

  useEffect(() => {
    if (item && draft === null) setDraft(initialDraft(item.answers, item.action));
  }, [item, draft]);

  const mine = item !== null && me !== null && item.claimed_by === me && claimLeft(item.claim_expires_at, Date.now()) !== null;
  const theirs = item !== null && item.claimed_by !== null && !mine && claimLeft(item.claim_expires_at, Date.now()) !== null;
  const resolved = item?.status === 'resolved';
  const yes = t('rv.yes');
  const no = t('rv.no');

  const update = useCallback(
    (next: ReviewSummary) => {
      if (detail.state === 'ready') setDetail({ ...detail.data, ...next });
      onChanged(next);
    },
    [detail, setDetail, onChanged],
  );

  const run = useCallback(
    async <T,>(work: () => Promise<T>): Promise<T | undefined> => {
      setBusy(true);
      setError(null);
      try {
        return await work();
      } catch (failure) {
        setError(failure);
        say(t('rv.say.failed'));
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [say, t],
  );

  // A claim on its way, which a resolution waits for so that the two never cross.
  const claiming = useRef<Promise<void> | null>(null);
  const resolving = useRef(false);
  const claim = useCallback(
    (quiet: boolean) => {
      const claimed = run(() => api<ReviewSummary>('POST', `${path}/claim`)).then((reply) => {
        if (reply && !resolving.current) update(reply);
        if (reply && !quiet) say(t('rv.say.claimed'));
        if (claiming.current === claimed) claiming.current = null;
      });
      claiming.current = claimed;
      return claimed;
    },
    [run, path, update, say, t],
  );

  const release = useCallback(async () => {
    if (!mine) return say(t('rv.say.notClaimed'));
    const released = await run(() => api<ReviewSummary>('POST', `${path}/release`));
    if (released) {
      update(released);
      say(t('rv.say.released'));
    }
  }, [mine, run, path, update, say, t]);

  const resolve = useCallback(async () => {
    if (!draft || resolving.current) return;
    resolving.current = true;
    await claiming.current;
    const body = resolutionBody(draft, note);
    const done = await run(() => api<ReviewSummary>('POST', `${path}/resolve`, body));
    resolving.current = false;
    if (done) {
      onChanged(done);
      onResolved(id, t('rv.say.resolved', { action: body.action ?? '—' }));
    }
  }, [draft, note, run, path, onChanged, onResolved, id, t]);

  /** A change to the draft; the first one claims the item in the background, so that nobody else starts on it. */
  const edit = useCallback(
    (next: ReviewDraft, said: string) => {
      setDraft(next);
      say(said);
      if (!mine && !theirs && !resolved && claiming.current === null) void claim(true);
    },
    [mine, theirs, resolved, claim, say],
  );

  const fieldName = (key: string | null) => key ?? t('rv.rightAction');

  useReviewKeys((command) => {
    if (!item || !draft) return false;
    if (command.type === 'leave') {
      noteRef.current?.blur();
      return true;
    }
    if (command.type === 'release') {
      void release();
      return true;
    }
    if (resolved && command.type !== 'next' && command.type !== 'previous') {
      say(t('rv.say.alreadyResolved'));
      return true;
    }
    if (theirs && (command.type === 'pick' || command.type === 'resolve' || command.type === 'claim')) {
      say(t('rv.claim.theirs', { until: formatDate(item.claim_expires_at) }));
      return true;
    }
    switch (command.type) {
      case 'pick': {
        const next = pickOption(draft, fields, command.option);
        const field = fields[draft.field]!;
        if (!next) {
          say(t('rv.say.noOption', { n: command.option + 1, field: fieldName(field.key) }));
          return true;
        }
        edit(next, t('rv.say.picked', { value: outcomeText(field.options[command.option]!, yes, no), field: fieldName(field.key) }));
        return true;
      }
      case 'field': {
        const next = moveField(draft, fields, command.step);
        setDraft(next);
        say(t('rv.say.field', { field: fieldName(fields[next.field]!.key) }));
        return true;
      }
      case 'resolve':
        void resolve();
        return true;
      case 'claim':
        void claim(false);
        return true;
      case 'note':
        noteRef.current?.focus();
        return true;
      default:
        return false;
    }
  });

  const reason = item ? reasonMessage(item.action_reason, item.action, percent) : null;
  return (
    <section className="card review-item" aria-labelledby="rv-item-title" data-testid="rv-item">
      <Loaded value={detail} reload={reload}>
        {(data) => (
          <>
            <h2 id="rv-item-title">
              {t('rv.itemName', { decision: data.decision, version: data.version })} <span className="muted small">{label}</span>
            </h2>
            <div className="tags">
              <span className="badge">{t(`rv.reason.${data.reason}` as MessageKey)}</span>
              <span className={`badge status-${data.status}`} data-testid="rv-status">
                {t(`rv.status.${data.status}` as MessageKey)}
              </span>
              <DueBadge item={data} now={Date.now()} />
              {mine && <ClaimTimer expiresAt={data.claim_expires_at!} onLapse={() => say(t('rv.claim.lapsed'))} />}
              {theirs && <span className="badge">{t('rv.claim.theirs', { until: formatDate(data.claim_expires_at) })}</span>}
            </div>
            <dl className="facts">
              <dt>{t('rv.action')}</dt>
              <dd>
                <strong>{data.action ?? '—'}</strong>
                {reason && <span className="muted"> · {t(reason.key, reason.vars)}</span>}
              </dd>
              <dt>{t('rv.executed')}</dt>
              <dd>{formatDate(data.executed_at)}</dd>
              <dt>{t('rv.execution')}</dt>
              <dd>
                <code>{data.execution_id}</code>
              </dd>
            </dl>
            {error !== null && <ErrorBox error={error} />}
            {draft && (
              <div className="review-fields">
                {fields.map((field, index) => {
                  const answer = field.key === null ? null : data.answers.find((candidate) => candidate.key === field.key)!;
                  const value = field.key === null ? draft.action : (draft.answers[field.key] ?? null);
                  const name = `rv-field-${index}`;
                  return (
                    <fieldset
                      key={field.key ?? '(action)'}
                      className={index === draft.field ? 'review-field current' : 'review-field'}
                      disabled={resolved || theirs}
                    >
                      <legend>
                        {field.key === null ? t('rv.rightAction') : `${field.key} (${answer!.kind})`}
                        {index === draft.field && <span className="visually-hidden"> {t('rv.currentField')}</span>}
                      </legend>
                      {answer && (
                        <p className="muted small">
                          {t('rv.machine', { answer: answer.answer === null ? '—' : String(answer.answer), confidence: percent(answer.confidence) })}
                        </p>
                      )}
                      <ul className="review-options">
                        {field.options.map((option, n) => {
                          const share =
                            answer?.distribution?.[String(option)] ?? answer?.distribution?.[option === true ? 'yes' : option === false ? 'no' : ''];
                          return (
                            <li key={String(option)}>
                              <label>
                                <input type="radio" name={name} checked={value === option} onChange={() => setDraft(setField(draft, field.key, option))} />
                                <kbd aria-hidden="true">{n + 1}</kbd> {outcomeText(option, yes, no)}
                                {share !== undefined && (
                                  <>
                                    {' '}
                                    <meter min={0} max={1} value={share} aria-hidden="true" /> <span className="muted small">{percent(share)}</span>
                                  </>
                                )}
                              </label>
                            </li>
                          );
                        })}
                      </ul>
                    </fieldset>
                  );
                })}
                <label className="field">
                  <span>{t('rv.note')}</span>
                  <textarea ref={noteRef} rows={2} maxLength={2000} value={note} disabled={resolved} onChange={(event) => setNote(event.target.value)} />
                </label>
                <div className="actions">
                  <button type="button" className="primary" disabled={busy || resolved || theirs} onClick={() => void resolve()} aria-keyshortcuts="Enter">
                    {t('rv.resolve')}
                  </button>
                  {mine ? (
                    <button type="button" disabled={busy} onClick={() => void release()} aria-keyshortcuts="Escape">
                      {t('rv.release')}
                    </button>
                  ) : (
                    <button type="button" disabled={busy || resolved || theirs} onClick={() => void claim(false)} aria-keyshortcuts="c">
                      {t('rv.claim')}
                    </button>
                  )}
                </div>
              </div>
            )}
            {data.resolution && (
              <p className="notice" data-testid="rv-resolution">
                {t('rv.resolvedAs', {
                  action: data.resolution.action ?? '—',
                  answers: Object.entries(data.resolution.answers)
                    .map(([key, value]) => `${key}: ${outcomeText(value, yes, no)}`)
                    .join(', '),
                })}
              </p>
            )}
            <h3>{t('rv.state')}</h3>
            <TableWrap label={t('rv.state')}>
              <pre className="review-state">{JSON.stringify(data.state, null, 2)}</pre>
            </TableWrap>
            <TraceTable trace={data.trace} />
          </>
        )}
      </Loaded>
    </section>
  );
}
