import { Fragment } from 'react';
import { useApp } from '../context';
import type { MessageKey } from '../lib/i18n';
import { TableWrap } from '../ui';
import { DataTable } from '../components/data-table';

type Operand = string | number | null;

export interface ExecutionTrace {
  composites: Array<{ key: string; value: number | null }>;
  rules: Array<{
    rule: number;
    action: string;
    matched: boolean;
    conditions: Array<{ on: string; key: string; left: Operand; op: string; right: Operand; holds: boolean }>;
  }>;
  decided_by: { type: string; rule?: number; question?: string; code?: string };
  action: string;
}

const OPERATORS: Record<string, string> = { eq: '=', neq: '≠', gt: '>', gte: '≥', lt: '<', lte: '≤' };

/** Numbers to four places, so a comparison such as 0.8999 against 0.9 stays readable and exact enough to judge. */
function operand(value: Operand, hidden: string): string {
  if (value === null) return hidden;
  return typeof value === 'number' ? String(Math.round(value * 10_000) / 10_000) : value;
}

/** How an execution reached its action: composites, then every policy rule and each of its conditions. */
export function TraceTable({ trace }: { trace: ExecutionTrace | null | undefined }) {
  const { t } = useApp();
  if (!trace) return <p className="muted">{t('trace.none')}</p>;
  const reason = trace.decided_by;
  const reasonKey = `trace.reason.${reason.type}` as MessageKey;
  const hidden = t('trace.hidden');
  return (
    <section className="card trace" aria-labelledby="trace-title">
      <h2 id="trace-title">{t('trace.title')}</h2>
      <p>
        {t('trace.decidedBy')}:{' '}
        <strong>
          {t(reasonKey, { rule: (reason.rule ?? 0) + 1, question: reason.question ?? '', code: reason.code ?? '' })} → {trace.action}
        </strong>
      </p>
      {trace.composites.length > 0 && (
        <DataTable
          label={t('trace.composites')}
          caption="shown"
          cards={false}
          rows={trace.composites}
          rowKey={(composite) => composite.key}
          columns={[
            { key: 'composite', header: t('trace.composite'), cell: (composite) => <code>{composite.key}</code> },
            { key: 'value', header: t('trace.value'), cell: (composite) => operand(composite.value, hidden) },
          ]}
        />
      )}
      {trace.rules.length === 0 ? (
        <p className="muted">{t('trace.noRules')}</p>
      ) : (
        <TableWrap label={t('trace.rules')}>
          <table className="trace-rules">
            <caption>{t('trace.rules')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('trace.rule')}</th>
                <th scope="col">{t('trace.condition')}</th>
                <th scope="col">{t('trace.left')}</th>
                <th scope="col">{t('trace.op')}</th>
                <th scope="col">{t('trace.right')}</th>
                <th scope="col">{t('trace.holds')}</th>
              </tr>
            </thead>
            <tbody>
              {trace.rules.map((rule) => (
                <Fragment key={rule.rule}>
                  {rule.conditions.map((condition, i) => (
                    <tr key={i} className={reason.type === 'policy' && reason.rule === rule.rule ? 'decisive' : undefined}>
                      {i === 0 && (
                        <th scope="rowgroup" rowSpan={rule.conditions.length}>
                          {rule.rule + 1} → {rule.action}{' '}
                          <span className={`badge ${rule.matched ? 'success' : ''}`}>{rule.matched ? t('trace.matched') : t('trace.notMatched')}</span>
                        </th>
                      )}
                      <td>
                        {condition.on} <code>{condition.key}</code>
                      </td>
                      <td>{operand(condition.left, hidden)}</td>
                      <td>
                        <span aria-label={condition.op}>{OPERATORS[condition.op] ?? condition.op}</span>
                      </td>
                      <td>{operand(condition.right, hidden)}</td>
                      <td>{condition.holds ? '✓' : '✗'}</td>
                    </tr>
                  ))}
                </Fragment>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
