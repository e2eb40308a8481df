import type { Policy, PolicyCondition } from './schema-types';

const SYMBOLS: Record<string, string> = { eq: '=', neq: '≠', gt: '>', gte: '≥', lt: '<', lte: '≤' };

/** One condition in the schema's own terms, short enough for a chart's axis: `intent = refund`, `confidence(intent) < 0.6`. */
export function summarizeCondition(condition: PolicyCondition): string {
  const op = SYMBOLS[condition.op] ?? condition.op;
  switch (condition.on) {
    case 'answer':
      return `${condition.question} ${op} ${String(condition.value)}`;
    case 'confidence':
      return `confidence(${condition.question}) ${op} ${condition.value}`;
    case 'score':
      return `score(${condition.question}) ${op} ${condition.value}`;
    case 'composite':
      return `${condition.composite} ${op} ${condition.value}`;
    default:
      return '';
  }
}

/**
 * A policy rule named by what it tests and does, `intent = refund and urgency = furious → block`: rules have no key
 * of their own, so this is how one version's rule 1 is told from another's in a chart.
 */
export function summarizePolicy(policy: Pick<Policy, 'when' | 'and' | 'action'>): string {
  const conditions = [policy.when, ...(policy.and ?? [])].map(summarizeCondition).filter((text) => text.length > 0);
  return `${conditions.join(' and ')} → ${policy.action}`;
}
