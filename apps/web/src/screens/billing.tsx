import { FormEvent } from 'react';
import { api } from '../lib/api';
import { can, useApp } from '../context';
import { formatCount } from '../lib/numbers';
import { planLabel } from '../lib/plans';
import { ErrorBox, formatDate, Loaded, Page, useAction, useLoad } from '../ui';
import { Account, money, Usage } from './usage';

interface Retention {
  days: number | null;
  plan_days: number;
  effective_days: number;
}

export function Billing() {
  const { t, locale, workspace } = useApp();
  const [value, reload] = useLoad(() => api<{ account: Account }>('GET', `/workspaces/${workspace!.id}`), [workspace!.id]);
  return (
    <Page title={t('bill.title')}>
      <Loaded value={value} reload={reload}>
        {({ account }) => (
          <dl className="facts">
            <dt>{t('bill.plan')}</dt>
            <dd>
              <strong>{planLabel(account.plan.name, t)}</strong> · {t('bill.rate', { n: formatCount(account.plan.rate_limit_per_minute, locale) })}
            </dd>
            <dt>{t('bill.usage')}</dt>
            <dd>
              {t('bill.usageOf', { used: formatCount(account.usage.used, locale), included: formatCount(account.usage.included, locale) })}{' '}
              <span className="muted">({t('bill.period', { start: formatDate(account.usage.period_start), end: formatDate(account.usage.period_end) })})</span>
              <progress max={Math.max(1, account.usage.included)} value={Math.min(account.usage.used, account.usage.included)} aria-label={t('bill.usage')} />
            </dd>
            <dt>{t('bill.credits')}</dt>
            <dd>{money(account.balance.available_cents, account.balance.currency, locale)}</dd>
            <dt>{t('bill.spendCap')}</dt>
            <dd>
              {account.spend_cap.spend_cap_cents === null
                ? t('bill.none')
                : `${money(account.spend_cap.spent_cents, account.spend_cap.currency, locale)} / ${money(account.spend_cap.spend_cap_cents, account.spend_cap.currency, locale)}`}
            </dd>
          </dl>
        )}
      </Loaded>
      <Usage />
      {can(workspace, 'owner') && value.state === 'ready' && <SpendCap account={value.data.account} onSaved={reload} />}
      <ExecutionRetention />
    </Page>
  );
}

/** How long the execution log is kept: the plan's, or less when an owner or admin shortens it. */
function ExecutionRetention() {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const admin = can(workspace, 'admin');
  const [value, reload, set] = useLoad(() => api<Retention>('GET', `/workspaces/${ws}/execution-retention`), [ws]);
  const { busy, error, act } = useAction();

  const save = (days: number | null) => void act(async () => set(await api<Retention>('PUT', `/workspaces/${ws}/execution-retention`, { days })));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save(Number(new FormData(event.currentTarget).get('days')));
  };

  return (
    <section className="card" aria-labelledby="retention-title">
      <h2 id="retention-title">{t('bill.retention')}</h2>
      {error !== null && <ErrorBox error={error} />}
      <Loaded value={value} reload={reload}>
        {(retention) => (
          <>
            <p>
              {t('bill.retentionKept', { days: retention.effective_days })}{' '}
              <span className="muted">{retention.days === null ? t('bill.retentionPlan') : t('bill.retentionOwn', { plan: retention.plan_days })}</span>
            </p>
            {admin && (
              <form className="inline-form" onSubmit={submit}>
                <label className="field">
                  <span>{t('bill.retentionDays', { plan: retention.plan_days })}</span>
                  <input
                    name="days"
                    type="number"
                    min={1}
                    max={retention.plan_days}
                    step={1}
                    required
                    defaultValue={retention.effective_days}
                    key={retention.effective_days}
                  />
                </label>
                <button type="submit" className="primary" disabled={busy}>
                  {t('bill.retentionSave')}
                </button>
                {retention.days !== null && (
                  <button type="button" disabled={busy} onClick={() => save(null)}>
                    {t('bill.retentionUsePlan')}
                  </button>
                )}
              </form>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}

/**
 * The Owner's cap on what the workspace spends past its included volume per billing cycle, entered in the
 * account's currency and sent in cents.
 */
function SpendCap({ account, onSaved }: { account: Account; onSaved: () => void }) {
  const { t, workspace } = useApp();
  const { busy, error, act } = useAction(onSaved);
  const currency = account.spend_cap.currency.toUpperCase();
  const save = (cents: number | null) => void act(() => api('PUT', `/workspaces/${workspace!.id}/spend-cap`, { spend_cap_cents: cents }));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save(Math.round(Number(new FormData(event.currentTarget).get('cap')) * 100));
  };
  const cap = account.spend_cap.spend_cap_cents;
  return (
    <section className="card" aria-labelledby="spend-cap-title">
      <h2 id="spend-cap-title">{t('bill.spendCap')}</h2>
      <p>{t('bill.spendCapIntro')}</p>
      {error !== null && <ErrorBox error={error} />}
      <form className="inline-form" onSubmit={submit}>
        <label className="field">
          <span>{t('bill.spendCapAmount', { currency })}</span>
          <input name="cap" type="number" min={0} step={0.01} required defaultValue={cap === null ? '' : cap / 100} key={cap ?? 'none'} />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('bill.spendCapSave')}
        </button>
        {cap !== null && (
          <button type="button" disabled={busy} onClick={() => save(null)}>
            {t('bill.spendCapRemove')}
          </button>
        )}
      </form>
    </section>
  );
}
