import { api } from '../lib/api';
import { useApp } from '../context';
import { formatDate, Loaded, Page, useLoad } from '../ui';

interface Account {
  plan: { name: string; included_decisions: number; rate_limit_per_minute: number; hard_cap: boolean };
  usage: { period_start: string; period_end: string; used: number; included: number; reserved: number };
  balance: { currency: string; available_cents: number; promotional_cents: number; paid_cents: number };
  spend_cap: { spend_cap_cents: number | null; spent_cents: number; currency: string };
}

function money(cents: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
  } catch {
    return `${(cents / 100).toFixed(2)} ${currency}`;
  }
}

export function Billing() {
  const { t, workspace } = useApp();
  const [value, reload] = useLoad(() => api<{ account: Account }>('GET', `/workspaces/${workspace!.id}`), [workspace!.id]);
  return (
    <Page title={t('bill.title')}>
      <Loaded value={value} reload={reload}>
        {({ account }) => (
          <dl className="facts">
            <dt>{t('bill.plan')}</dt>
            <dd>
              {account.plan.name} · {account.plan.rate_limit_per_minute}/min
            </dd>
            <dt>{t('bill.usage')}</dt>
            <dd>
              {account.usage.used} / {account.usage.included} {t('bill.included').toLowerCase()} ({formatDate(account.usage.period_start)} –{' '}
              {formatDate(account.usage.period_end)})
              <progress max={Math.max(1, account.usage.included)} value={Math.min(account.usage.used, account.usage.included)} aria-label={t('bill.usage')} />
            </dd>
            <dt>{t('bill.credits')}</dt>
            <dd>{money(account.balance.available_cents, account.balance.currency)}</dd>
            <dt>{t('bill.spendCap')}</dt>
            <dd>
              {account.spend_cap.spend_cap_cents === null
                ? t('bill.none')
                : `${money(account.spend_cap.spent_cents, account.spend_cap.currency)} / ${money(account.spend_cap.spend_cap_cents, account.spend_cap.currency)}`}
            </dd>
          </dl>
        )}
      </Loaded>
    </Page>
  );
}
