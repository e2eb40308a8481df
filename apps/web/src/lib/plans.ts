import type { MessageKey } from './i18n';

const PLAN_KEYS: Record<string, MessageKey> = {
  genesis: 'plan.genesis',
  developer: 'plan.developer',
  growth: 'plan.growth',
  enterprise: 'plan.enterprise',
};

/** A plan as people know it ("Genesis (free)"), or its id capitalized for a plan this application has no words for. */
export function planLabel(name: string, t: (key: MessageKey) => string): string {
  const key = PLAN_KEYS[name];
  return key ? t(key) : name.charAt(0).toUpperCase() + name.slice(1);
}
