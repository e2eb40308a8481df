import { useState } from 'react';
import { ACTIONS } from '@ds/decision-schema';
import { api, DecisionSummary } from '../lib/api';
import { useApp } from '../context';
import type { MessageKey } from '../lib/i18n';
import { RECORDED_FAILURE_CODES } from '../lib/failures';
import { formatCount, formatUsd } from '../lib/numbers';
import { Link, navigate, useLocation } from '../router';
import { Choice, CursorListBody, formatDate, Page, useCursorList, useLoad } from '../ui';
import { DataTable } from '../components/data-table';
import { useDeliveryStatuses } from './deliveries';
import { DeliveryLinks, Execution, metricsOf, ModeBadge, page, queuedDeliveries, VersionLabel } from './executions';

const SOURCE_GROUPS = ['live', 'test', 'playground', 'replay', 'shadow'] as const;
type SourceGroup = (typeof SOURCE_GROUPS)[number];
const REASONS = ['policy', 'other_option', 'low_confidence', 'engine_error', 'default'] as const;
/** The width under which the app lays tables out as cards (styles.css). */
const NARROW_SCREEN = '(max-width: 720px)';
const CANONICAL_VERSION = /^[1-9][0-9]{0,9}$/;
/** The filters besides source, by their name in the address and in the API. */
const FILTERS = ['version', 'action', 'reason', 'status', 'error_code'] as const;
type Filter = (typeof FILTERS)[number];

/** The list's filters live in the address, so a reload, a shared link and Back all show the same list. */
function useQuery(): [URLSearchParams, (changes: Record<string, string>) => void] {
  const { path, search } = useLocation();
  const query = new URLSearchParams(search);
  const set = (changes: Record<string, string>) => {
    const next = new URLSearchParams(search);
    for (const [name, value] of Object.entries(changes)) {
      if (value === '') next.delete(name);
      else next.set(name, value);
    }
    const text = next.toString();
    navigate(text ? `${path}?${text}` : path, true);
  };
  return [query, set];
}

/** The source groups in the address; none named means live runs only, as the API lists them by default. */
function sourcesOf(query: URLSearchParams): SourceGroup[] {
  const named = (query.get('source') ?? '').split(',');
  const groups = SOURCE_GROUPS.filter((group) => named.includes(group));
  return groups.length > 0 ? groups : ['live'];
}

export function Executions() {
  const { t, workspace } = useApp();
  const [decisions] = useLoad(() => api<{ data: DecisionSummary[] }>('GET', `/workspaces/${workspace!.id}/decisions`), [workspace!.id]);
  const [query, setQuery] = useQuery();
  const decision = query.get('decision') ?? '';
  return (
    <Page title={t('ex.title')}>
      <Choice
        label={t('ex.decision')}
        value={decision}
        first={{ value: '', label: t('ex.all') }}
        options={decisions.state === 'ready' ? decisions.data.data.map((item) => ({ value: item.slug, label: item.name })) : []}
        onChange={(next) => setQuery({ decision: next })}
      />
      <ExecutionsTable decision={decision} />
    </Page>
  );
}

/** What the empty list learnt about why: how many executions the same filters find among every source. */
interface Hidden {
  otherSources: number;
}

export function ExecutionsTable({ decision }: { decision: string }) {
  const { t, workspace, locale } = useApp();
  const ws = workspace!.id;
  const [query, setQuery] = useQuery();
  const sources = sourcesOf(query);
  const filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? ''])) as Record<Filter, string>;
  const [total, setTotal] = useState<{ count: number; capped: boolean } | null>(null);
  const [hidden, setHidden] = useState<Hidden | null>(null);
  const key = JSON.stringify([ws, decision, sources, filters]);
  const list = useCursorList<Execution>(
    async (cursor) => {
      const params = { limit: '20', decision, source: sources.join(','), ...filters };
      const reply = await page(ws, { ...params, ...(cursor ? { cursor } : { include: 'total_count' }) });
      if (cursor === null) {
        setTotal(reply.total_count === undefined ? null : { count: reply.total_count, capped: reply.total_capped === true });
        setHidden(null);
        if (reply.data.length === 0 && sources.length < SOURCE_GROUPS.length) {
          const everywhere = await page(ws, { ...params, source: 'all', limit: '1', include: 'total_count' });
          setHidden({ otherSources: everywhere.total_count ?? everywhere.data.length });
        }
      }
      return reply;
    },
    [key],
  );
  const deliveryIds = (list.rows ?? []).flatMap((row) => queuedDeliveries(row));
  const deliveries = useDeliveryStatuses(ws, deliveryIds);
  const activeFilters = FILTERS.filter((name) => filters[name] !== '');
  // Open where the screen has room for them (the width where tables become cards), and whenever the address sets
  // one of them, so that what narrows the list is always in view; a phone keeps the list on its first screen.
  const [filtersOpen, setFiltersOpen] = useState(() => activeFilters.length > 0 || !matchMedia(NARROW_SCREEN).matches);

  const toggleSource = (group: SourceGroup, on: boolean) => {
    const next = SOURCE_GROUPS.filter((item) => (item === group ? on : sources.includes(item)));
    // Live alone is the default, so it needs no parameter.
    setQuery({ source: next.length === 1 && next[0] === 'live' ? '' : next.join(',') });
  };

  return (
    <div className="stack">
      <fieldset className="plain">
        <legend>{t('ex.sources')}</legend>
        <div className="toolbar">
          {SOURCE_GROUPS.map((group) => (
            <label key={group} className="check">
              <input
                type="checkbox"
                name="source"
                value={group}
                checked={sources.includes(group)}
                // At least one source stays chosen: unchecking the last would list nothing.
                disabled={sources.length === 1 && sources[0] === group}
                onChange={(event) => toggleSource(group, event.target.checked)}
              />
              {t(`ex.group.${group}`)}
            </label>
          ))}
        </div>
      </fieldset>
      <details open={filtersOpen} onToggle={(event) => setFiltersOpen(event.currentTarget.open)}>
        <summary>{activeFilters.length === 0 ? t('ex.moreFilters') : t('ex.moreFiltersSet', { count: activeFilters.length })}</summary>
        <div className="toolbar">
          <VersionField value={filters.version} onChange={(version) => setQuery({ version })} />
          <FilterSelect
            name="action"
            label={t('ex.action')}
            value={filters.action}
            options={ACTIONS.map((action) => ({ value: action, label: action }))}
            onChange={setQuery}
          />
          <FilterSelect
            name="reason"
            label={t('ex.reason')}
            value={filters.reason}
            options={REASONS.map((reason) => ({ value: reason, label: t(`ex.reason.${reason}`) }))}
            onChange={setQuery}
          />
          <FilterSelect
            name="status"
            label={t('ex.status')}
            value={filters.status}
            options={(['success', 'error'] as const).map((status) => ({ value: status, label: t(`ex.status.${status}`) }))}
            onChange={setQuery}
          />
          <FilterSelect
            name="error_code"
            label={t('ex.errorCode')}
            value={filters.error_code}
            options={RECORDED_FAILURE_CODES.map((code) => ({ value: code, label: code }))}
            onChange={setQuery}
          />
        </div>
      </details>
      <div className="toolbar">
        {total !== null && list.rows !== null && (
          <p className="muted" role="status" data-testid="executions-total">
            {total.capped
              ? t('ex.count.capped', { count: formatCount(total.count, locale) })
              : total.count === 1
                ? t('ex.count.one')
                : t('ex.count.many', { count: formatCount(total.count, locale) })}
          </p>
        )}
        <button type="button" onClick={() => void list.load(null)} disabled={list.busy}>
          {t('ex.refresh')}
        </button>
      </div>
      <CursorListBody
        list={list}
        empty={
          <ExplorerEmpty
            sources={sources}
            active={activeFilters.map((name) => `${t(FILTER_LABELS[name])}: ${filters[name]}`)}
            hidden={hidden}
            onAllSources={() => setQuery({ source: SOURCE_GROUPS.join(',') })}
            onClear={() => setQuery(Object.fromEntries(FILTERS.map((name) => [name, ''])))}
          />
        }
      >
        {(rows) => (
          <DataTable
            label={t('ex.title')}
            caption="none"
            className="executions"
            rows={rows}
            rowKey={(row) => row.id}
            columns={[
              { key: 'created', header: t('ex.created'), cell: (row) => <Link href={`/executions/${row.id}`}>{formatDate(row.created_at)}</Link> },
              {
                key: 'decision',
                header: t('ex.decision'),
                cell: (row) => (
                  <>
                    <code>{row.decision}</code> <VersionLabel version={row.version} />
                  </>
                ),
              },
              {
                key: 'status',
                header: t('ex.status'),
                cell: (row) => (
                  <>
                    <span className={`badge ${row.status}`}>{row.status}</span> <span className="muted small">{row.source}</span>
                  </>
                ),
              },
              { key: 'mode', header: t('ex.mode'), cell: (row) => <ModeBadge livemode={row.livemode} /> },
              { key: 'action', header: t('ex.action'), cell: (row) => row.action ?? '—' },
              { key: 'reason', header: t('ex.reason'), cell: (row) => <ReasonLabel reason={row.action_reason} /> },
              {
                key: 'error',
                header: t('ex.errorCode'),
                cell: (row) => {
                  const code = errorCodeOf(row);
                  return code === null ? '—' : <code>{code}</code>;
                },
              },
              { key: 'model', header: t('ex.model'), cell: (row) => (metricsOf(row).model ? <code>{metricsOf(row).model}</code> : '—') },
              {
                key: 'latency',
                header: t('ex.latency'),
                className: 'number',
                cell: (row) => {
                  const { latency_ms } = metricsOf(row);
                  return latency_ms === undefined ? '—' : t('dlv.ms', { ms: formatCount(latency_ms, locale) });
                },
              },
              {
                key: 'tokens',
                header: t('ex.tokens'),
                className: 'number',
                cell: (row) => {
                  const metrics = metricsOf(row);
                  return metrics.input_tokens === undefined
                    ? '—'
                    : t('ex.tokensInOut', { in: formatCount(metrics.input_tokens, locale), out: formatCount(metrics.output_tokens ?? 0, locale) });
                },
              },
              {
                key: 'cost',
                header: t('ex.cost'),
                className: 'number',
                cell: (row) => {
                  const { estimated_cost_usd } = metricsOf(row);
                  return estimated_cost_usd === undefined ? '—' : formatUsd(estimated_cost_usd, locale);
                },
              },
              { key: 'deliveries', header: t('ex.deliveries'), cell: (row) => <DeliveryLinks ids={queuedDeliveries(row)} statuses={deliveries} /> },
            ]}
          />
        )}
      </CursorListBody>
    </div>
  );
}

const FILTER_LABELS: Record<Filter, MessageKey> = {
  version: 'ex.version',
  action: 'ex.action',
  reason: 'ex.reason',
  status: 'ex.status',
  error_code: 'ex.errorCode',
};

/** A failed run's error code, or the engine error an engine-error fallback answered in place of. */
function errorCodeOf(execution: Execution): string | null {
  if (typeof execution.error?.code === 'string') return execution.error.code;
  const reason = execution.action_reason;
  return reason?.type === 'engine_error' && typeof reason.code === 'string' ? reason.code : null;
}

function ReasonLabel({ reason }: { reason: unknown }) {
  const { t } = useApp();
  if (typeof reason !== 'object' || reason === null) return <>—</>;
  const r = reason as { type?: unknown; rule?: unknown };
  // Rules are counted from 0 in the reason; people count policies from 1.
  if (r.type === 'policy' && typeof r.rule === 'number') return <>{t('ex.reason.rule', { rule: r.rule + 1 })}</>;
  return (REASONS as readonly unknown[]).includes(r.type) ? <>{t(`ex.reason.${r.type as (typeof REASONS)[number]}`)}</> : <>—</>;
}

function FilterSelect({
  name,
  label,
  value,
  options,
  onChange,
}: {
  name: Filter;
  label: string;
  value: string;
  options: Array<{ value: string; label: string }>;
  onChange: (changes: Record<string, string>) => void;
}) {
  const { t } = useApp();
  return (
    <Choice
      name={name}
      label={label}
      value={value}
      first={{ value: '', label: t('ex.status.any') }}
      options={options}
      onChange={(next) => onChange({ [name]: next })}
    />
  );
}

/** A version typed in digits; only a version the API reads (1, 2, …, no leading zero) reaches the address. */
function VersionField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const { t } = useApp();
  const [text, setText] = useState(value);
  const invalid = text !== '' && !CANONICAL_VERSION.test(text);
  return (
    <label className="field narrow">
      <span>{t('ex.version')}</span>
      <input
        name="version"
        inputMode="numeric"
        size={6}
        value={text}
        aria-invalid={invalid}
        placeholder={t('ex.status.any')}
        onChange={(event) => {
          setText(event.target.value);
          if (event.target.value === '' || CANONICAL_VERSION.test(event.target.value)) onChange(event.target.value);
        }}
      />
      {invalid && <span className="issue">{t('ex.versionInvalid')}</span>}
    </label>
  );
}

/** Says which filter hid everything: the chosen sources, when other sources hold matches, or the other filters. */
function ExplorerEmpty({
  sources,
  active,
  hidden,
  onAllSources,
  onClear,
}: {
  sources: SourceGroup[];
  active: string[];
  hidden: Hidden | null;
  onAllSources: () => void;
  onClear: () => void;
}) {
  const { t, locale } = useApp();
  const chosen = sources.map((group) => t(`ex.group.${group}`)).join(', ');
  if (hidden !== null && hidden.otherSources > 0)
    return (
      <span data-testid="executions-empty">
        {t('ex.empty.sources', { sources: chosen, count: formatCount(hidden.otherSources, locale) })}{' '}
        <button type="button" className="link" onClick={onAllSources}>
          {t('ex.showAllSources')}
        </button>
      </span>
    );
  if (active.length > 0)
    return (
      <span data-testid="executions-empty">
        {t('ex.empty.filters', { filters: active.join('; ') })}{' '}
        <button type="button" className="link" onClick={onClear}>
          {t('ex.clearFilters')}
        </button>
      </span>
    );
  return <span data-testid="executions-empty">{t('ex.empty.none', { sources: chosen })}</span>;
}
