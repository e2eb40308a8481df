// How a run reached its action, for the execution log: composites, each policy rule's conditions with the values
// they compared, and what decided. Built from the evaluation alone, so it can never carry the run's input state.
import { compare, conditionOperands, type ConditionSubject } from './conditions';
import type { ActionReason, Evaluation } from './evaluate';
import type { Action, NormalizedSchema, Operator, PolicyCondition } from './schema-types';

export interface ConditionTrace {
  on: PolicyCondition['on'];
  /** The question or composite the condition reads. */
  key: string;
  /** The run's value; null when the run has none (an engine-error fallback) or its answers are not stored. */
  left: string | number | null;
  op: Operator;
  /** The value compared with; a probability question's own threshold is resolved. */
  right: string | number | null;
  holds: boolean;
}

export interface RuleTrace {
  rule: number;
  action: Action;
  matched: boolean;
  conditions: ConditionTrace[];
}

export interface EvaluationTrace {
  /** Every composite's value in −1..1, in the decision's order; empty when the run has none. */
  composites: Array<{ key: string; value: number | null }>;
  /** Every policy rule in order, evaluated even after the first match, so a reader sees which others would match. */
  rules: RuleTrace[];
  /**
   * What decided: the matching rule's index, or why policies were not reached (an `other` answer, low confidence,
   * an engine error) or none matched (`default`). Same shape as the run's action_reason.
   */
  decided_by: ActionReason;
  action: Action;
}

/**
 * @param withValues false leaves the run's own values (left sides, composites) out, for decisions that do not
 *   store their output; which rules matched and the values they compare with stay.
 */
export function traceEvaluation(schema: NormalizedSchema, evaluation: Evaluation, withValues = true): EvaluationTrace {
  const subject: ConditionSubject = evaluation;
  return {
    composites: schema.composites.map((composite) => ({
      key: composite.key,
      value: withValues ? (evaluation.composites?.[composite.key] ?? null) : null,
    })),
    rules: schema.policies.map((policy, rule) => {
      const conditions = [policy.when, ...policy.and].map((condition): ConditionTrace => {
        const { left, right } = conditionOperands(condition, subject, schema);
        return {
          on: condition.on,
          key: condition.on === 'composite' ? condition.composite : condition.question,
          left: withValues ? (left ?? null) : null,
          op: condition.op,
          right: right ?? null,
          holds: compare(left, condition.op, right),
        };
      });
      return { rule, action: policy.action, matched: conditions.every((condition) => condition.holds), conditions };
    }),
    decided_by: evaluation.action_reason,
    action: evaluation.action,
  };
}
