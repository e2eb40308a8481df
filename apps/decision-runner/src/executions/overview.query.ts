import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DecisionOverviewRequest, ServiceError } from '@ds/contracts';
import { CountRow, DecisionOverview, foldOverview, HistogramRow, parseOverviewRange, planOverview, PolicyRuleRow, summarizePolicy } from '@ds/decision-schema';
import { pgPool } from '../pg-pool';
import { ROLLUP_READS, RULE_ROLLUPS } from './rollups';
import { DecisionStore } from '../decisions/decision.store';

/**
 * Both reads sum the grain rows into the chart's buckets inside PostgreSQL ($6 is the bucket width in seconds), so
 * that what crosses to the runner is one row per bucket and key, however many grain rows a long range holds.
 */
const COUNTS = {
  name: 'decision-runner.overview-counts',
  text: `SELECT (floor(extract(epoch FROM bucket) / $6) * $6)::bigint AS t, livemode, status, action, reason,
                sum(runs)::bigint AS runs, sum(input_tokens)::bigint AS input_tokens, sum(output_tokens)::bigint AS output_tokens,
                sum(cost_usd)::float8 AS cost_usd
         FROM ${ROLLUP_READS.counts}
         WHERE workspace_id = $1 AND decision_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5
         GROUP BY 1, 2, 3, 4, 5`,
};

/** Latency bins per chart bucket; confidence bins only over the whole range (the chart shows the range's distribution). */
const HISTOGRAMS = {
  name: 'decision-runner.overview-histograms',
  text: `SELECT (floor(extract(epoch FROM bucket) / $6) * $6)::bigint AS t, livemode, metric, question, bin, sum(runs)::bigint AS runs
         FROM ${ROLLUP_READS.histograms}
         WHERE workspace_id = $1 AND decision_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5 AND metric = 'latency'
         GROUP BY 1, 2, 3, 4, 5
         UNION ALL
         SELECT extract(epoch FROM $4::timestamptz)::bigint, livemode, metric, question, bin, sum(runs)::bigint
         FROM ${ROLLUP_READS.histograms}
         WHERE workspace_id = $1 AND decision_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5 AND metric = 'confidence'
         GROUP BY 2, 3, 4, 5`,
};

/** Policy-decided runs per rule and version over the whole range (the reasons chart ranks the range, not buckets). */
const RULES = {
  name: 'decision-runner.overview-rules',
  text: `SELECT livemode, version, rule, sum(runs)::bigint AS runs
         FROM ${RULE_ROLLUPS}
         WHERE workspace_id = $1 AND decision_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5
         GROUP BY 1, 2, 3`,
};

interface CountRecord {
  t: string;
  livemode: boolean;
  status: string;
  action: string;
  reason: string;
  runs: string;
  input_tokens: string;
  output_tokens: string;
  cost_usd: number;
}

interface HistogramRecord {
  t: string;
  livemode: boolean;
  metric: 'latency' | 'confidence';
  question: string;
  bin: number;
  runs: string;
}

/** A decision's overview over a range, read from the rollups the run path keeps (never from the execution log). */
@Injectable()
export class OverviewQuery {
  private readonly decisions: DecisionStore;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.decisions = DecisionStore.of(db);
  }

  async overview(request: DecisionOverviewRequest, now = new Date()): Promise<DecisionOverview> {
    const checked = parseOverviewRange(request, now);
    if (!checked.ok) throw new ServiceError('INVALID_REQUEST', checked.message, checked.issues);
    const decisionId = await this.decisions.requireId(request.workspaceId, request.decision.startsWith('dec_') ? 'id' : 'slug', request.decision);
    const plan = planOverview(checked.range, now);
    const values = [request.workspaceId, decisionId, plan.grainSeconds, plan.from, plan.to, plan.bucketSeconds];
    const pool = pgPool(this.db);
    const [counts, histograms, rules] = await Promise.all([
      pool.query<CountRecord>({ ...COUNTS, values }),
      pool.query<HistogramRecord>({ ...HISTOGRAMS, values }),
      pool.query<{ livemode: boolean; version: number; rule: number; runs: string }>({ ...RULES, values: values.slice(0, 5) }),
    ]);
    const overview = foldOverview(
      decisionId,
      plan,
      counts.rows.map((row): CountRow => ({
        t: Number(row.t),
        livemode: row.livemode,
        status: row.status,
        action: row.action,
        reason: row.reason,
        runs: Number(row.runs),
        inputTokens: Number(row.input_tokens),
        outputTokens: Number(row.output_tokens),
        costUsd: row.cost_usd,
      })),
      histograms.rows.map((row): HistogramRow => ({
        t: Number(row.t),
        livemode: row.livemode,
        metric: row.metric,
        question: row.question,
        bin: row.bin,
        runs: Number(row.runs),
      })),
      rules.rows.map((row): PolicyRuleRow => ({ livemode: row.livemode, version: row.version, rule: row.rule, runs: Number(row.runs) })),
    );
    await this.nameRules(decisionId, overview);
    return overview;
  }

  /** Each versioned policy reason gets its rule's condition in words, from that version's schema. */
  private async nameRules(decisionId: string, overview: DecisionOverview): Promise<void> {
    const reasons = [...overview.reasons.live, ...overview.reasons.test].filter((reason) => reason.version !== undefined);
    const versions = [...new Set(reasons.map((reason) => reason.version!))];
    if (versions.length === 0) return;
    const rows = await this.decisions.policies(decisionId, versions);
    const policiesOf = new Map(rows.map((row) => [row.version, Array.isArray(row.policies) ? (row.policies as unknown[]) : []]));
    for (const reason of reasons) {
      const policy = policiesOf.get(reason.version!)?.[Number(reason.reason.slice('policy:'.length))];
      if (policy && typeof policy === 'object' && 'when' in policy && 'action' in policy) {
        reason.rule_summary = summarizePolicy(policy as Parameters<typeof summarizePolicy>[0]);
      }
    }
  }
}
