import { Fragment, useEffect, useState } from 'react';
import { api, ApiError } from '../lib/api';
import { can, useApp } from '../context';
import { shownBody } from '../lib/bodies';
import { Link } from '../router';
import { CursorListBody, CursorPage, Empty, ErrorBox, formatDate, ListToolbar, Loaded, OnceSecret, Page, RefusedPage, useCursorList, useLoad } from '../ui';

interface Attempt {
  sequence: number;
  attempt: number;
  started_at: string;
  outcome: string;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  /**
   * On one delivery's own view only: what the receiver answered, null when no answer came. The content type and
   * the body are null for a role below Admin, which sees the body's size only.
   */
  response?: { content_type: string | null; body: string | null; body_bytes: number; truncated: boolean } | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

interface Delivery {
  id: string;
  decision_id: string;
  decision_slug: string;
  execution_id: string;
  destination_key: string;
  kind: string;
  url: string;
  livemode: boolean;
  status: DeliveryStatus;
  sequence: number;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
  attempts: Attempt[];
  /** On one delivery's own view only: whether headers and bodies are in it (Admins and Owners). */
  bodies_shown?: boolean;
  /** On one delivery's own view only: the request every attempt sends, signatures and secrets redacted; headers and body null below Admin. */
  request?: { method: string; headers: Record<string, string> | null; body: string | null; body_bytes: number };
}

/** How often pending deliveries shown on screen are looked at again, so a retry or a resend shows its outcome. */
const PENDING_REFRESH_MS = 2_000;

export function Deliveries() {
  const { t } = useApp();
  return (
    <Page title={t('dlv.title')}>
      <p className="muted">
        {t('dlv.intro')} <Link href="/signing-secret">{t('nav.signingSecret')}</Link>
      </p>
      <DeliveriesTable />
    </Page>
  );
}

/** A workspace's deliveries, or one decision's when `decisionId` is given. */
export function DeliveriesTable({ decisionId }: { decisionId?: string }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const member = can(workspace, 'member');
  const [status, setStatus] = useState('');
  const [rowErrors, setRowErrors] = useState<Record<string, unknown>>({});

  const base = decisionId ? `/workspaces/${ws}/decisions/${encodeURIComponent(decisionId)}/deliveries` : `/workspaces/${ws}/deliveries`;
  const list = useCursorList<Delivery>(
    (cursor) => {
      const query = new URLSearchParams({ limit: '20' });
      if (status) query.set('status', status);
      if (cursor) query.set('cursor', cursor);
      return api<CursorPage<Delivery>>('GET', `${base}?${query}`);
    },
    [ws, decisionId, status],
  );
  const { rows, replace } = list;

  // Pending deliveries are retried or resent by the service; look at them again until they settle.
  const pending = rows?.filter((row) => row.status === 'pending').map((row) => row.id) ?? [];
  const pendingKey = pending.join(',');
  useEffect(() => {
    if (pending.length === 0) return;
    const timer = setTimeout(() => {
      for (const id of pending) {
        api<Delivery>('GET', `/workspaces/${ws}/deliveries/${id}`).then(replace, () => undefined);
      }
    }, PENDING_REFRESH_MS);
    return () => clearTimeout(timer);
  }, [ws, pendingKey, rows]);

  const resend = async (delivery: Delivery) => {
    setRowErrors(({ [delivery.id]: _gone, ...rest }) => rest);
    try {
      replace(await api<Delivery>('POST', `/workspaces/${ws}/deliveries/${delivery.id}/resend`));
    } catch (failure) {
      setRowErrors((current) => ({ ...current, [delivery.id]: failure }));
      // A 409 means the delivery is no longer failed (resent elsewhere, or retried): show what it is now.
      api<Delivery>('GET', `/workspaces/${ws}/deliveries/${delivery.id}`).then(replace, () => undefined);
    }
  };

  return (
    <div className="stack">
      <ListToolbar
        label={t('dlv.status')}
        value={status}
        options={(['any', 'pending', 'succeeded', 'failed'] as const).map((value) => ({
          value: value === 'any' ? '' : value,
          label: t(`dlv.status.${value}`),
        }))}
        onChange={setStatus}
        onRefresh={() => void list.load(null)}
        busy={list.busy}
      />
      <CursorListBody list={list} empty={t('dlv.empty')}>
        {(rows) => (
          <ul className="deliveries">
            {rows.map((delivery) => (
              <li key={delivery.id} className="card delivery">
                <DeliveryCard delivery={delivery} onResend={member ? () => void resend(delivery) : undefined} error={rowErrors[delivery.id]} />
              </li>
            ))}
          </ul>
        )}
      </CursorListBody>
    </div>
  );
}

/** One delivery: where it went, its state, its attempts, and Resend when it failed and the reader may resend. */
function DeliveryCard({ delivery, onResend, error, open }: { delivery: Delivery; onResend?: () => void; error?: unknown; open?: boolean }) {
  const { t } = useApp();
  return (
    <>
      <div className="delivery-head">
        <h2 id={`dlv-${delivery.id}`} className="delivery-title">
          <code>{delivery.destination_key}</code> <span className="muted small">({delivery.kind})</span>
        </h2>
        <span className={`badge ${delivery.status}`} data-testid="delivery-status">
          {t(`dlv.status.${delivery.status}`)}
        </span>
      </div>
      <dl className="facts">
        <dt>{t('dlv.decision')}</dt>
        <dd>
          <Link href={`/decisions/${delivery.decision_id}/deliveries`}>
            <code>{delivery.decision_slug}</code>
          </Link>
        </dd>
        <dt>{t('dlv.execution')}</dt>
        <dd>
          <Link href={`/executions/${delivery.execution_id}`}>
            <code>{delivery.execution_id}</code>
          </Link>
        </dd>
        <dt>{t('dlv.url')}</dt>
        <dd className="break">
          <code>{delivery.url}</code>
        </dd>
        <dt>{t('dlv.created')}</dt>
        <dd>{formatDate(delivery.created_at)}</dd>
        <dt>{t('dlv.id')}</dt>
        <dd>
          <code>{delivery.id}</code>
          {!delivery.livemode && <span className="badge">{t('dlv.test')}</span>}
        </dd>
        {delivery.next_attempt_at && delivery.status === 'pending' && (
          <>
            <dt>{t('dlv.next')}</dt>
            <dd>{formatDate(delivery.next_attempt_at)}</dd>
          </>
        )}
      </dl>
      <details open={open}>
        <summary>{t('dlv.attempts', { count: delivery.attempts.length })}</summary>
        <AttemptsTable delivery={delivery} />
      </details>
      {delivery.status === 'failed' && onResend && (
        <div className="actions">
          <button type="button" onClick={onResend}>
            {t('dlv.resend')} <span className="visually-hidden">{delivery.destination_key}</span>
          </button>
        </div>
      )}
      {error !== undefined && <ErrorBox error={error} />}
    </>
  );
}

/** One delivery on its own page, reached from the execution that queued it; a pending one is looked at again until it settles. */
export function DeliveryDetail({ id }: { id: string }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const member = can(workspace, 'member');
  const [value, reload, set] = useLoad(() => api<Delivery>('GET', `/workspaces/${ws}/deliveries/${encodeURIComponent(id)}`), [ws, id]);
  const [error, setError] = useState<unknown>(undefined);
  const pending = value.state === 'ready' && value.data.status === 'pending';
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(
      () => void api<Delivery>('GET', `/workspaces/${ws}/deliveries/${encodeURIComponent(id)}`).then(set, () => undefined),
      PENDING_REFRESH_MS,
    );
    return () => clearTimeout(timer);
  }, [ws, id, pending, value]);
  const resend = async () => {
    setError(undefined);
    try {
      set(await api<Delivery>('POST', `/workspaces/${ws}/deliveries/${encodeURIComponent(id)}/resend`));
    } catch (failure) {
      setError(failure);
      reload();
    }
  };
  return (
    <Page title={t('dlv.detail', { id })}>
      <p>
        <Link href="/deliveries">{t('dlv.back')}</Link>
      </p>
      <Loaded value={value} reload={reload}>
        {(delivery) => (
          <section className="card delivery" aria-labelledby={`dlv-${delivery.id}`}>
            <DeliveryCard delivery={delivery} onResend={member ? () => void resend() : undefined} error={error} open />
            <DeliveryExchange delivery={delivery} />
          </section>
        )}
      </Loaded>
    </Page>
  );
}

/**
 * The status of each delivery in `ids`, read once and again every few seconds while any is pending, so a list
 * of executions shows a retry's outcome without a reload.
 */
export function useDeliveryStatuses(ws: string, ids: string[]): Record<string, DeliveryStatus> {
  const [statuses, setStatuses] = useState<Record<string, DeliveryStatus>>({});
  const wanted = ids.filter((id) => statuses[id] === undefined || statuses[id] === 'pending');
  const wantedKey = wanted.join(',');
  const firstRead = wanted.some((id) => statuses[id] === undefined);
  useEffect(() => {
    if (wanted.length === 0) return;
    let live = true;
    const read = () =>
      Promise.all(
        wanted.map((id) =>
          api<Delivery>('GET', `/workspaces/${ws}/deliveries/${encodeURIComponent(id)}`).then(
            (delivery) => [id, delivery.status] as const,
            () => null,
          ),
        ),
      ).then((found) => {
        if (!live) return;
        const known = found.filter((entry): entry is readonly [string, DeliveryStatus] => entry !== null);
        setStatuses((current) => ({ ...current, ...Object.fromEntries(known) }));
      });
    const timer = setTimeout(() => void read(), firstRead ? 0 : PENDING_REFRESH_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [ws, wantedKey, statuses]);
  return statuses;
}

/** An attempt's number as the attempts table shows it: `sequence.attempt` once the delivery was resent. */
function attemptLabel(delivery: Delivery, attempt: Attempt): string {
  return delivery.sequence > 1 || attempt.sequence > 1 ? `${attempt.sequence}.${attempt.attempt}` : String(attempt.attempt);
}

/** A body in monospace, JSON pretty-printed; focusable, since a long one scrolls. */
function Body({ text, contentType, label, testId }: { text: string; contentType: string | null | undefined; label: string; testId: string }) {
  const shown = shownBody(text, contentType);
  return (
    <pre className="code delivery-body" tabIndex={0} aria-label={label} data-testid={testId} data-json={shown.json}>
      {shown.text}
    </pre>
  );
}

/**
 * The request a delivery sends and what each attempt's receiver answered, on the delivery's own page. A role below
 * Admin gets sizes instead of headers and bodies, and a line saying who sees them.
 */
function DeliveryExchange({ delivery }: { delivery: Delivery }) {
  const { t } = useApp();
  const request = delivery.request;
  if (!request) return null;
  const answered = delivery.attempts.filter((attempt) => attempt.response);
  const withheld = delivery.bodies_shown === false || request.body === null;
  return (
    <>
      <section className="delivery-exchange" aria-labelledby={`dlv-request-${delivery.id}`}>
        <h3 id={`dlv-request-${delivery.id}`}>{t('dlv.request')}</h3>
        <p className="break">
          <code>
            {request.method} {delivery.url}
          </code>
        </p>
        {request.headers && (
          <details>
            <summary>{t('dlv.headers', { count: Object.keys(request.headers).length })}</summary>
            <dl className="facts">
              {Object.entries(request.headers).map(([name, value]) => (
                <Fragment key={name}>
                  <dt>
                    <code>{name}</code>
                  </dt>
                  <dd className="break">
                    <code>{value}</code>
                  </dd>
                </Fragment>
              ))}
            </dl>
          </details>
        )}
        {request.body === null ? (
          <p className="muted small" data-testid="delivery-request-size">
            {t('dlv.bodyBytes', { bytes: request.body_bytes })}
          </p>
        ) : (
          <Body text={request.body} contentType={request.headers?.['content-type']} label={t('dlv.requestBody')} testId="delivery-request-body" />
        )}
      </section>
      <section className="delivery-exchange" aria-labelledby={`dlv-responses-${delivery.id}`}>
        <h3 id={`dlv-responses-${delivery.id}`}>{t('dlv.responses')}</h3>
        {answered.length === 0 && <Empty>{t('dlv.noResponses')}</Empty>}
        {answered.map((attempt) => {
          const response = attempt.response!;
          const label = t('dlv.responseOf', { attempt: attemptLabel(delivery, attempt), status: attempt.response_status ?? '—' });
          return (
            <div key={`${attempt.sequence}.${attempt.attempt}`} className="delivery-response" data-testid="delivery-response">
              <h4>
                {label} {response.content_type && <span className="muted small">{response.content_type}</span>}
              </h4>
              {response.body === null ? (
                <p className="muted small" data-testid="delivery-response-size">
                  {t('dlv.bodyBytes', { bytes: response.body_bytes })}
                </p>
              ) : response.body === '' ? (
                <p className="muted small">{t('dlv.emptyBody')}</p>
              ) : (
                <Body text={response.body} contentType={response.content_type} label={label} testId="delivery-response-body" />
              )}
              {response.truncated && <p className="muted small">{t('dlv.truncated')}</p>}
            </div>
          );
        })}
        <p className="muted small" data-testid={withheld ? 'delivery-bodies-withheld' : undefined}>
          {t(withheld ? 'dlv.bodiesForAdmins' : 'dlv.bodiesKept')}
        </p>
      </section>
    </>
  );
}

function AttemptsTable({ delivery }: { delivery: Delivery }) {
  const { t } = useApp();
  if (delivery.attempts.length === 0) return <Empty>{t('dlv.noAttempts')}</Empty>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{t('dlv.attemptsOf', { id: delivery.id })}</caption>
        <thead>
          <tr>
            <th scope="col">{t('dlv.attempt')}</th>
            <th scope="col">{t('dlv.started')}</th>
            <th scope="col">{t('dlv.outcome')}</th>
            <th scope="col">{t('dlv.response')}</th>
            <th scope="col">{t('dlv.duration')}</th>
            <th scope="col">{t('dlv.error')}</th>
          </tr>
        </thead>
        <tbody>
          {delivery.attempts.map((attempt) => (
            <tr key={`${attempt.sequence}.${attempt.attempt}`}>
              <td>{attemptLabel(delivery, attempt)}</td>
              <td>{formatDate(attempt.started_at)}</td>
              <td>
                <span className={`badge ${attempt.outcome}`}>{attempt.outcome}</span>
              </td>
              <td>{attempt.response_status ?? '—'}</td>
              <td>{attempt.duration_ms === null ? '—' : t('dlv.ms', { ms: attempt.duration_ms })}</td>
              <td className="break">{attempt.error ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface SecretView {
  hint: string;
  created_at: string;
  previous_expires_at: string | null;
}

/** The workspace's signing secret: its hint, and rotation with the new secret shown once. */
export function SigningSecret() {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const admin = can(workspace, 'admin');
  const [value, reload] = useLoad(async () => {
    if (!admin) return null;
    try {
      return await api<SecretView>('GET', `/workspaces/${ws}/signing-secret`);
    } catch (failure) {
      // A workspace gets its secret at its first delivery or first rotation; until then there is none to show.
      if (failure instanceof ApiError && failure.status === 404) return 'none' as const;
      throw failure;
    }
  }, [ws, admin]);
  const [rotated, setRotated] = useState<{ secret: string; previous_expires_at: string | null } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const rotate = async () => {
    setBusy(true);
    setError(null);
    try {
      setRotated(await api<{ secret: string; previous_expires_at: string | null }>('POST', `/workspaces/${ws}/signing-secret/rotate`));
      setConfirming(false);
      reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  if (!admin) return <RefusedPage title={t('sig.title')} note={t('sig.adminOnly')} />;
  return (
    <Page title={t('sig.title')}>
      <p className="muted">{t('sig.intro')}</p>
      {error !== null && <ErrorBox error={error} />}
      {rotated && <OnceSecret label={t('sig.new')} value={rotated.secret} id="new-signing-secret" note={t('sig.shown')} onClose={() => setRotated(null)} />}
      <Loaded value={value} reload={reload}>
        {(secret) =>
          secret && (
            <section className="card" aria-labelledby="sig-current">
              <h2 id="sig-current">{t('sig.current')}</h2>
              {secret === 'none' ? (
                <Empty>{t('sig.none')}</Empty>
              ) : (
                <dl className="facts">
                  <dt>{t('sig.hint')}</dt>
                  <dd>
                    <code data-testid="signing-secret-hint">{secret.hint}</code>
                  </dd>
                  <dt>{t('sig.created')}</dt>
                  <dd>{formatDate(secret.created_at)}</dd>
                  {secret.previous_expires_at && (
                    <>
                      <dt>{t('sig.previous')}</dt>
                      <dd>{t('sig.previousUntil', { at: formatDate(secret.previous_expires_at) })}</dd>
                    </>
                  )}
                </dl>
              )}
              <p id="sig-overlap">{t('sig.overlap')}</p>
              {confirming ? (
                <div className="actions">
                  <span>{t('sig.confirm')}</span>
                  <button type="button" className="danger" disabled={busy} onClick={() => void rotate()}>
                    {t('sig.rotate')}
                  </button>
                  <button type="button" onClick={() => setConfirming(false)}>
                    {t('common.cancel')}
                  </button>
                </div>
              ) : (
                <button type="button" aria-describedby="sig-overlap" onClick={() => setConfirming(true)}>
                  {t('sig.rotate')}…
                </button>
              )}
            </section>
          )
        }
      </Loaded>
    </Page>
  );
}
