import type { MessageKey } from './i18n';

/**
 * Why a run took its action, in words that match what happened: a policy's own action, `continue` when no policy
 * matched (that is not the fallback), or the fallback action named when an `other` answer, a low confidence or an
 * engine failure took it.
 */
export function reasonMessage(
  reason: unknown,
  action: unknown,
  share: (value: number) => string,
): { key: MessageKey; vars: Record<string, string | number> } | null {
  if (typeof reason !== 'object' || reason === null) return null;
  const r = reason as Record<string, unknown>;
  const taken = String(action ?? '—');
  switch (r.type) {
    case 'policy':
      // Rules are counted from 0 in the reason; people count policies from 1.
      return typeof r.rule === 'number' ? { key: 'pg.reason.policy', vars: { rule: r.rule + 1, action: taken } } : null;
    case 'other_option':
      return { key: 'pg.reason.other_option', vars: { question: String(r.question), action: taken } };
    case 'low_confidence':
      if (typeof r.confidence !== 'number' || typeof r.minConfidence !== 'number') return null;
      return {
        key: 'pg.reason.low_confidence',
        vars: { question: String(r.question), confidence: share(r.confidence), minimum: share(r.minConfidence), action: taken },
      };
    case 'engine_error':
      return { key: 'pg.reason.engine_error', vars: { code: String(r.code), action: taken } };
    case 'default':
      return { key: 'pg.reason.default', vars: { action: taken } };
    default:
      return null;
  }
}
