import { Injectable } from '@nestjs/common';
import { DecisionOverviewRequest, ServiceError } from '@ds/contracts';
import { CountRow, DecisionOverview, foldOverview, HistogramRow, parseOverviewRange, planOverview, PolicyRuleRow, summarizePolicy } from '@ds/decision-schema';
import { ExecutionStore } from './execution.store';
import { DecisionStore } from '../decisions/decision.store';

/** A decision's overview over a range, read from the rollups the run path keeps (never from the execution log). */
@Injectable()
export class OverviewQuery {
  constructor(
    private readonly decisions: DecisionStore,
    private readonly executions: ExecutionStore,
  ) {}

  async overview(request: DecisionOverviewRequest, now = new Date()): Promise<DecisionOverview> {
    const checked = parseOverviewRange(request, now);
    if (!checked.ok) throw new ServiceError('INVALID_REQUEST', checked.message, checked.issues);
    const decisionId = await this.decisions.requireId(request.workspaceId, request.decision.startsWith('dec_') ? 'id' : 'slug', request.decision);
    const plan = planOverview(checked.range, now);
    const values = [request.workspaceId, decisionId, plan.grainSeconds, plan.from, plan.to, plan.bucketSeconds];
    const { counts, histograms, rules } = await this.executions.overview(values);
    const overview = foldOverview(
      decisionId,
      plan,
      counts.map((row): CountRow => ({
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
      histograms.map((row): HistogramRow => ({
        t: Number(row.t),
        livemode: row.livemode,
        metric: row.metric,
        question: row.question,
        bin: row.bin,
        runs: Number(row.runs),
      })),
      rules.map((row): PolicyRuleRow => ({ livemode: row.livemode, version: row.version, rule: row.rule, runs: Number(row.runs) })),
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
