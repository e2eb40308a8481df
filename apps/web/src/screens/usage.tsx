import { ChartFrame } from '../charts/chart-frame';
import { BarsChart, Datum, LinesChart, Reference } from '../charts/charts';
import { may, useApp } from '../context';
import { api, DecisionSummary } from '../lib/api';
import { formatCount, formatShare } from '../lib/numbers';
import { Link } from '../router';
import { decisionUsageRows, DecisionUsage, DecisionUsageRow } from '../lib/usage';
import { Loaded, useLoad } from '../ui';

/** Decisions drawn in the per-decision chart; its own table and the table beside it list every one. */
const CHART_DECISIONS = 10;

const DAY = 86_400_000;

/** The account as `GET /v1/me` and the ledger give it (the parts shown here). */
export interface Account {
  plan: { name: string; included_decisions: number; max_decisions: number | null; rate_limit_per_minute: number; hard_cap: boolean };
  usage: { period_start: string; period_end: string; used: number; included: number; reserved: number };
  balance: {
    currency: string;
    available_cents: number;
    promotional_cents: number;
    paid_cents: number;
    credits: Array<{ id: string; kind: string; remaining_cents: number; currency: string }>;
  };
  spend_cap: { spend_cap_cents: number | null; spent_cents: number; currency: string };
}

/** `GET /app/v1/workspaces/{ws}/usage`: the account and its period's billed decisions per UTC day and per decision. */
export interface UsageByDay {
  account: Account;
  days: Array<{ date: string; billed: number }>;
  decisions: DecisionUsage[];
}

export function money(cents: number, currency: string, locale?: string): string {
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
  } catch {
    return `${(cents / 100).toFixed(2)} ${currency}`;
  }
}

/** Every UTC day of the period up to today, with the ledger's billed decisions and their running total. */
export function periodDays(reply: UsageByDay, now = new Date()): Array<{ date: string; billed: number; total: number }> {
  const billed = new Map(reply.days.map((day) => [day.date, day.billed]));
  const start = Date.parse(reply.account.usage.period_start.slice(0, 10));
  const end = Math.min(Date.parse(reply.account.usage.period_end), now.getTime());
  const days: Array<{ date: string; billed: number; total: number }> = [];
  let total = 0;
  for (let at = start; at <= end; at += DAY) {
    const date = new Date(at).toISOString().slice(0, 10);
    total += billed.get(date) ?? 0;
    days.push({ date, billed: billed.get(date) ?? 0, total });
  }
  return days;
}

/** A credit amount in millionths of a cent: a decision costs fractions of a cent, so up to four decimals of the unit. */
function moneyMicros(microcents: number, currency: string, locale?: string): string {
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase(), maximumFractionDigits: 4 }).format(microcents / 100_000_000);
  } catch {
    return `${(microcents / 100_000_000).toFixed(4)} ${currency}`;
  }
}

/**
 * The period's usage as the ledger books it: the same figures as `GET /v1/me`, drawn per day and per decision.
 * The ledger knows decisions by id; their names come from the decisions list, where the session may read it.
 */
export function Usage() {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const names = may(workspace, 'decisions:read');
  const [value, reload] = useLoad(async () => {
    const [reply, decisions] = await Promise.all([
      api<UsageByDay>('GET', `/workspaces/${ws}/usage`),
      names ? api<{ data: DecisionSummary[] }>('GET', `/workspaces/${ws}/decisions`).catch(() => ({ data: [] })) : { data: [] },
    ]);
    return { reply, decisions: decisions.data };
  }, [ws, names]);
  return (
    <section className="stack" aria-labelledby="usage-title">
      <h2 id="usage-title">{t('use.title')}</h2>
      <Loaded value={value} reload={reload}>
        {({ reply, decisions }) => (
          <>
            <UsageCharts reply={reply} />
            <UsagePerDecision reply={reply} rows={decisionUsageRows(reply.decisions ?? [], decisions, reply.account.usage.used)} />
          </>
        )}
      </Loaded>
    </section>
  );
}

/** Billed decisions (and credits, where any were taken) per decision: a table, and the most billed as bars. */
function UsagePerDecision({ reply, rows }: { reply: UsageByDay; rows: DecisionUsageRow[] }) {
  const { t, locale } = useApp();
  const count = (n: number) => formatCount(n, locale);
  const currency = reply.account.balance.currency;
  const withCredits = rows.some((row) => row.creditsMicrocents > 0);
  const label = (row: DecisionUsageRow) =>
    row.kind === 'unrecorded' ? t('use.decision.unrecorded') : row.kind === 'deleted' ? t('use.decision.deleted', { id: row.label }) : row.label;
  const columns = [t('use.decision'), t('use.billed'), t('use.share'), ...(withCredits ? [t('use.decision.credits')] : [])];
  const cells = (row: DecisionUsageRow) => [
    count(row.billed),
    formatShare(row.share, locale),
    ...(withCredits ? [moneyMicros(row.creditsMicrocents, currency, locale)] : []),
  ];
  if (rows.length === 0) return <p className="muted">{t('use.decision.none')}</p>;
  const top = rows[0]!;
  return (
    <div className="charts">
      <div className="card chart">
        <div className="chart-head">
          <h3 id="usage-per-decision">{t('use.chart.perDecision')}</h3>
        </div>
        <div className="table-wrap">
          <table aria-labelledby="usage-per-decision" data-testid="usage-per-decision">
            <thead>
              <tr>
                {columns.map((column) => (
                  <th key={column} scope="col">
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.key}>
                  <th scope="row">
                    {row.slug ? <Link href={`/decisions/${row.slug}/overview`}>{label(row)}</Link> : <span className="muted">{label(row)}</span>}
                  </th>
                  {cells(row).map((cell, index) => (
                    <td key={index}>{cell}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
      <ChartFrame
        title={t('use.chart.perDecisionBars')}
        summary={t('use.summary.perDecision', {
          decisions: rows.length,
          top: label(top),
          billed: count(top.billed),
          shown: Math.min(rows.length, CHART_DECISIONS),
        })}
        table={{ columns, rows: rows.map((row) => [label(row), ...cells(row)]) }}
      >
        <BarsChart
          data={rows.slice(0, CHART_DECISIONS).map((row) => ({ label: label(row), billed: row.billed }))}
          categoryKey="label"
          series={[{ key: 'billed', label: t('use.billed') }]}
          vertical
        />
      </ChartFrame>
    </div>
  );
}

function UsageCharts({ reply }: { reply: UsageByDay }) {
  const { t, locale } = useApp();
  const count = (n: number) => formatCount(n, locale);
  const account = reply.account;
  const days = periodDays(reply);
  const references: Reference[] = [{ value: account.usage.included, label: t('use.included', { n: count(account.usage.included) }) }];
  if (account.plan.hard_cap && account.plan.max_decisions !== null) {
    references.push({ value: account.plan.max_decisions, label: t('use.hardCap', { n: count(account.plan.max_decisions) }) });
  }
  const data: Datum[] = days.map((day) => ({ label: day.date, billed: day.billed, total: day.total }));
  const cap = account.spend_cap;
  return (
    <>
      <dl className="stats" aria-label={t('use.totals')}>
        <div>
          <dt>{t('use.billed')}</dt>
          <dd data-testid="usage-used">{count(account.usage.used)}</dd>
        </div>
        <div>
          <dt>{t('use.includedShort')}</dt>
          <dd>{count(account.usage.included)}</dd>
        </div>
        <div>
          <dt>{t('use.reserved')}</dt>
          <dd>{count(account.usage.reserved)}</dd>
        </div>
        <div>
          <dt>{t('use.credits')}</dt>
          <dd>{money(account.balance.available_cents, account.balance.currency)}</dd>
        </div>
        <div>
          <dt>{t('use.spendCap')}</dt>
          <dd>{cap.spend_cap_cents === null ? t('bill.none') : `${money(cap.spent_cents, cap.currency)} / ${money(cap.spend_cap_cents, cap.currency)}`}</dd>
        </div>
      </dl>
      <div className="charts">
        <ChartFrame
          title={t('use.chart.total')}
          summary={t('use.summary.total', {
            count: account.usage.used,
            used: count(account.usage.used),
            limits: references.map((reference) => reference.label).join(', '),
          })}
          table={{
            columns: [t('use.day'), t('use.billed'), t('use.total')],
            rows: days.map((day) => [day.date, day.billed, day.total]),
          }}
        >
          <LinesChart data={data} categoryKey="label" series={[{ key: 'total', label: t('use.total') }]} references={references} />
        </ChartFrame>
        <ChartFrame
          title={t('use.chart.daily')}
          summary={t('use.summary.daily', { days: days.filter((day) => day.billed > 0).length })}
          table={{ columns: [t('use.day'), t('use.billed')], rows: days.map((day) => [day.date, day.billed]) }}
        >
          <BarsChart data={data} categoryKey="label" series={[{ key: 'billed', label: t('use.billed') }]} />
        </ChartFrame>
        {account.balance.credits.length > 0 && (
          <ChartFrame
            title={t('use.chart.credits')}
            summary={t('use.summary.credits', { available: money(account.balance.available_cents, account.balance.currency) })}
            table={{
              columns: [t('use.credit'), t('use.remaining')],
              rows: account.balance.credits.map((credit) => [credit.id, money(credit.remaining_cents, credit.currency)]),
            }}
          >
            <BarsChart
              data={account.balance.credits.map((credit) => ({ label: credit.kind, remaining: credit.remaining_cents / 100 }))}
              categoryKey="label"
              series={[{ key: 'remaining', label: t('use.remaining') }]}
              vertical
            />
          </ChartFrame>
        )}
      </div>
    </>
  );
}
