import { ownValue } from './json';
import { THRESHOLD_VALUE, type Action, type DestinationCondition, type NormalizedSchema, type Operator } from './schema-types';

/** What conditions look at: an evaluation's values, and for destination conditions its action. */
export interface ConditionSubject {
  result: Record<string, string | number>;
  confidence: Record<string, number>;
  scores?: Record<string, number>;
  composites?: Record<string, number>;
  action?: Action;
}

/**
 * Whether a policy or destination condition holds. A condition on a value the subject does not have (the empty
 * result of an engine-error fallback, an action not yet decided) does not hold, whatever its operator: nothing is
 * known about that value, so no rule should fire on it.
 *
 * @param schema resolves `"value": "threshold"` to the probability question's own threshold.
 */
export function conditionHolds(condition: DestinationCondition, subject: ConditionSubject, schema: NormalizedSchema): boolean {
  const { left, right } = conditionOperands(condition, subject, schema);
  return compare(left, condition.op, right);
}

/** What a condition compares: the subject's value (undefined when it has none) and the value it is compared with. */
export function conditionOperands(
  condition: DestinationCondition,
  subject: ConditionSubject,
  schema: NormalizedSchema,
): { left: string | number | undefined; right: string | number | undefined } {
  switch (condition.on) {
    case 'action':
      return { left: subject.action, right: condition.value };
    case 'composite':
      return { left: lookup(subject.composites, condition.composite), right: condition.value };
    case 'score':
      return { left: lookup(subject.scores, condition.question), right: condition.value };
    case 'confidence':
      return { left: lookup(subject.confidence, condition.question), right: condition.value };
    case 'answer':
      return {
        left: lookup(subject.result, condition.question),
        right: condition.value === THRESHOLD_VALUE ? thresholdOf(schema, condition.question) : condition.value,
      };
  }
}

function lookup(values: Record<string, string | number> | undefined, key: string): string | number | undefined {
  return values === undefined ? undefined : (ownValue(values, key) as string | number | undefined);
}

function thresholdOf(schema: NormalizedSchema, key: string): number | undefined {
  const question = schema.questions.find((candidate) => candidate.key === key);
  return question?.kind === 'probability' ? (question.threshold ?? undefined) : undefined;
}

/** Numbers compare with every operator; texts (options, levels, actions) only for (in)equality. */
export function compare(actual: string | number | undefined, op: Operator, expected: string | number | undefined): boolean {
  if (actual === undefined || expected === undefined || typeof actual !== typeof expected) return false;
  switch (op) {
    case 'eq':
      return actual === expected;
    case 'neq':
      return actual !== expected;
  }
  if (typeof actual !== 'number' || typeof expected !== 'number') return false;
  switch (op) {
    case 'gt':
      return actual > expected;
    case 'gte':
      return actual >= expected;
    case 'lt':
      return actual < expected;
    case 'lte':
      return actual <= expected;
  }
}
