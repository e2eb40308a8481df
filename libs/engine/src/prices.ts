/** USD per million input tokens, matched by exact model name, else by the longest known prefix. */
export type PriceTable = Record<string, number>;

export const DEFAULT_PRICES: PriceTable = {
  'claude-opus-4': 15,
  'claude-sonnet-4': 3,
  'claude-haiku-4': 1,
  'claude-3-5-haiku': 0.8,
  'gpt-4.1': 2,
  'gpt-4.1-mini': 0.4,
  'gpt-4o': 2.5,
  'gpt-4o-mini': 0.15,
  'sim-': 1,
};

export function pricePerMillion(table: PriceTable, model: string): number {
  // Own properties only: a model named `constructor` or `toString` must not find Object.prototype.
  const exact = Object.hasOwn(table, model) ? table[model] : undefined;
  if (exact !== undefined) return exact;
  let best: { prefix: string; price: number } | null = null;
  for (const [prefix, price] of Object.entries(table)) {
    if (model.startsWith(prefix) && (best === null || prefix.length > best.prefix.length)) best = { prefix, price };
  }
  return best?.price ?? 0;
}

export function estimatedCostUsd(table: PriceTable, model: string, inputTokens: number): number {
  return Number(((inputTokens * pricePerMillion(table, model)) / 1_000_000).toFixed(8));
}

/**
 * The `model` label of the engine metrics: a model the price table names (exactly, else its longest
 * known prefix), or `other`. Decisions may name any model, so the table is the allow-list that keeps
 * the label's values bounded.
 */
export function modelLabel(table: PriceTable, model: string): string {
  if (Object.hasOwn(table, model)) return model;
  let best: string | null = null;
  for (const prefix of Object.keys(table)) {
    if (model.startsWith(prefix) && (best === null || prefix.length > best.length)) best = prefix;
  }
  return best ?? 'other';
}
