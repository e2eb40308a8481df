import { expectArray, expectKey, expectNumber, expectObject, expectOneOf, expectRequired, expectString, isGiven } from './field-checks';
import { isRecord } from './json';
import type { Issues, Path } from './issues';
import { CONDITION_STRING_MAX, LEVELS_MAX, POLICIES_MAX, POLICY_AND_MAX } from './limits';
import { ACTIONS, EQUALITY_OPERATORS, OPERATORS, THRESHOLD_VALUE } from './schema-types';
import type { QuestionFacts, QuestionIndex } from './validate-questions';

/** What a condition may refer to. Destination conditions may also test the action and name a threshold. */
export interface ConditionScope {
  questions: QuestionIndex;
  composites: ReadonlySet<string>;
  forDestination: boolean;
}

const POLICY_ON = ['answer', 'confidence', 'score', 'composite'] as const;
const DESTINATION_ON = [...POLICY_ON, 'action'] as const;
type On = (typeof DESTINATION_ON)[number];

const PROPERTIES: Record<On, readonly string[]> = {
  answer: ['on', 'question', 'op', 'value'],
  confidence: ['on', 'question', 'op', 'value'],
  score: ['on', 'question', 'op', 'value'],
  composite: ['on', 'composite', 'op', 'value'],
  action: ['on', 'op', 'value'],
};

export function validatePolicies(value: unknown, path: Path, issues: Issues, scope: ConditionScope): void {
  if (!isGiven(value) || !expectArray(value, path, issues, { max: POLICIES_MAX, noun: 'policies' })) return;
  value.forEach((policy, i) => {
    const policyPath = [...path, i];
    if (!expectObject(policy, policyPath, issues, ['when', 'and', 'action'])) return;
    if (expectRequired(policy, 'when', policyPath, issues)) validateCondition(policy.when, [...policyPath, 'when'], issues, scope);
    if (isGiven(policy.and)) validateConditionList(policy.and, [...policyPath, 'and'], issues, scope, POLICY_AND_MAX);
    if (expectRequired(policy, 'action', policyPath, issues)) expectOneOf(policy.action, ACTIONS, [...policyPath, 'action'], issues);
  });
}

export function validateConditionList(value: unknown, path: Path, issues: Issues, scope: ConditionScope, max: number): void {
  if (!expectArray(value, path, issues, { max, noun: 'conditions' })) return;
  value.forEach((condition, i) => validateCondition(condition, [...path, i], issues, scope));
}

export function validateCondition(value: unknown, path: Path, issues: Issues, scope: ConditionScope): void {
  if (!isRecord(value)) {
    issues.add(path, 'must be an object');
    return;
  }
  const allowedOn = scope.forDestination ? DESTINATION_ON : POLICY_ON;
  if (!expectRequired(value, 'on', path, issues) || !expectOneOf(value.on, allowedOn, [...path, 'on'], issues)) return;
  const on = value.on as On;
  expectObject(value, path, issues, PROPERTIES[on]);
  const opKnown = expectRequired(value, 'op', path, issues) && expectOneOf(value.op, on === 'action' ? EQUALITY_OPERATORS : OPERATORS, [...path, 'op'], issues);
  if (!expectRequired(value, 'value', path, issues)) return;
  const valuePath = [...path, 'value'];

  if (on === 'action') {
    expectOneOf(value.value, ACTIONS, valuePath, issues);
    return;
  }
  if (on === 'composite') {
    if (expectRequired(value, 'composite', path, issues) && expectKey(value.composite, [...path, 'composite'], issues)) {
      if (!scope.composites.has(value.composite)) issues.add([...path, 'composite'], `refers to an unknown composite "${value.composite}"`);
    }
    expectNumber(value.value, valuePath, issues, { min: -1, max: 1 });
    return;
  }
  const question = findQuestion(value, path, issues, scope.questions);
  if (on === 'confidence') {
    expectNumber(value.value, valuePath, issues, { min: 0, max: 1 });
  } else if (on === 'score') {
    if (question && question.facts.kind !== 'score') {
      issues.add([...path, 'question'], `"${question.key}" is not a score question`);
    } else {
      // Weighted levels run from 1 to the number of levels.
      expectNumber(value.value, valuePath, issues, { min: 1, max: question?.facts.labels?.length ?? LEVELS_MAX });
    }
  } else if (question) {
    checkAnswerValue(value, question.key, question.facts, path, issues, scope.forDestination, opKnown);
  }
}

function findQuestion(
  condition: Record<string, unknown>,
  path: Path,
  issues: Issues,
  questions: QuestionIndex,
): { key: string; facts: QuestionFacts } | undefined {
  if (!expectRequired(condition, 'question', path, issues) || !expectKey(condition.question, [...path, 'question'], issues)) {
    return undefined;
  }
  const facts = questions.get(condition.question);
  if (facts) return { key: condition.question, facts };
  issues.add([...path, 'question'], `refers to an unknown question "${condition.question}"`);
  return undefined;
}

function checkAnswerValue(
  condition: Record<string, unknown>,
  key: string,
  facts: QuestionFacts,
  path: Path,
  issues: Issues,
  forDestination: boolean,
  opKnown: boolean,
): void {
  const valuePath = [...path, 'value'];
  const value = condition.value;
  if (facts.kind === 'probability') {
    if (value !== THRESHOLD_VALUE) {
      expectNumber(value, valuePath, issues, { min: 0, max: 1 });
    } else if (!forDestination) {
      issues.add(valuePath, `"${THRESHOLD_VALUE}" may only be named by destination conditions`);
    } else if (!facts.hasThreshold) {
      issues.add(valuePath, `"${key}" has no threshold to name`);
    }
    return;
  }
  // Choice and score answers are labels: ordering them would compare text, which means nothing here.
  if (opKnown && !(EQUALITY_OPERATORS as readonly unknown[]).includes(condition.op)) {
    issues.add([...path, 'op'], `must be eq or neq for the ${facts.kind} question "${key}"`);
  }
  if (!expectString(value, valuePath, issues, { min: 1, max: CONDITION_STRING_MAX })) return;
  if (facts.kind === 'choice' && facts.options && !facts.options.has(value)) {
    issues.add(valuePath, `is not an option of "${key}"`);
  }
  if (facts.kind === 'score' && facts.labels && !facts.labels.includes(value)) {
    issues.add(valuePath, `is not a level of "${key}"`);
  }
}
