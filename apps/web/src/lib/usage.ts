/** One decision's share of the period, as the ledger answers it (`GET /app/v1/workspaces/{ws}/usage`, `decisions`). */
export interface DecisionUsage {
  decision_id: string | null;
  billed: number;
  credits_microcents: number;
}

/**
 * A row of the usage per decision: `known` (named from the decisions list), `deleted` (the ledger names an id the
 * list no longer has: shown by id) or `unrecorded` (runs billed before settlements named their decision).
 */
export interface DecisionUsageRow {
  key: string;
  kind: 'known' | 'deleted' | 'unrecorded';
  /** The decision's name, or its id when deleted; empty when unrecorded (the screen words it). */
  label: string;
  slug: string | null;
  billed: number;
  /** Of the period's billed decisions, 0..1. */
  share: number;
  creditsMicrocents: number;
}

/**
 * The ledger's rows named from the decisions list, in the ledger's order (most billed first). Nothing is merged or
 * dropped: the rows' `billed` add up to what the ledger summed, which is `usage.used`.
 */
export function decisionUsageRows(rows: DecisionUsage[], decisions: Array<{ id: string; slug: string; name: string }>, used: number): DecisionUsageRow[] {
  const byId = new Map(decisions.map((decision) => [decision.id, decision]));
  return rows.map((row) => {
    const share = used > 0 ? row.billed / used : 0;
    const base = { billed: row.billed, share, creditsMicrocents: row.credits_microcents };
    if (row.decision_id === null) return { ...base, key: '-', kind: 'unrecorded', label: '', slug: null };
    const decision = byId.get(row.decision_id);
    if (!decision) return { ...base, key: row.decision_id, kind: 'deleted', label: row.decision_id, slug: null };
    return { ...base, key: row.decision_id, kind: 'known', label: decision.name, slug: decision.slug };
  });
}
