import { expectObject, expectOneOf, expectRequired, expectString, isGiven } from './field-checks';
import { formatNumber } from './json';
import { Issues, type SchemaIssue } from './issues';
import { CONTEXT_MAX, STATE_AND_ALL_QUESTIONS_TOKENS_MAX, STATE_AND_LONGEST_QUESTION_TOKENS_MAX } from './limits';
import { normalizeValidInput } from './normalize';
import { ACTIONS, type NormalizedSchema, type SchemaInput } from './schema-types';
import { exampleState } from './state';
import { questionTokens, tokensOfJson } from './tokens';
import { validateCalibration } from './quality/validate-calibration';
import { validateComposites } from './validate-composites';
import { validateDestinations } from './validate-destinations';
import { validatePolicies, type ConditionScope } from './validate-conditions';
import { validateQuestions } from './validate-questions';
import { validateSettings } from './validate-settings';
import { validateStateSchema } from './validate-state-schema';

export type ValidationResult = { valid: true; schema: NormalizedSchema } | { valid: false; issues: SchemaIssue[] };

const TOP_LEVEL = ['state', 'context', 'questions', 'composites', 'policies', 'fallbackAction', 'settings', 'destinations', 'calibration'];

/**
 * Checks a decision schema against every limit and cross-reference and answers either the normalized schema
 * or every issue found. Never throws, whatever the input. Validating a normalized schema gives it back unchanged.
 */
export function validateSchema(input: unknown): ValidationResult {
  const issues = new Issues();
  if (!expectObject(input, [], issues, TOP_LEVEL)) return { valid: false, issues: issues.list };

  const stateFields = validateStateSchema(input.state, ['state'], issues);
  if (isGiven(input.context)) expectString(input.context, ['context'], issues, { max: CONTEXT_MAX });
  const questions = validateQuestions(input.questions, ['questions'], issues, stateFields);
  const composites = validateComposites(input.composites, ['composites'], issues, questions);
  const scope: ConditionScope = { questions, composites, forDestination: false };
  validatePolicies(input.policies, ['policies'], issues, scope);
  if (expectRequired(input, 'fallbackAction', [], issues)) expectOneOf(input.fallbackAction, ACTIONS, ['fallbackAction'], issues);
  validateSettings(input.settings, ['settings'], issues);
  validateDestinations(input.destinations, ['destinations'], issues, { ...scope, forDestination: true });
  validateCalibration(input.calibration, ['calibration'], issues, questions);
  if (issues.list.length > 0) return { valid: false, issues: issues.list };

  const schema = normalizeValidInput(input as unknown as SchemaInput);
  checkRoomForState(schema, issues);
  return issues.list.length > 0 ? { valid: false, issues: issues.list } : { valid: true, schema };
}

/**
 * Every limit can hold while the questions alone leave no room for a state in the per-call token budget; such a
 * schema would answer every run with 422. It is refused when even its example state (the one its contract
 * shows) would not fit, so every deployed decision can run at least that state.
 */
function checkRoomForState(schema: NormalizedSchema, issues: Issues): void {
  const stateTokens = tokensOfJson(JSON.stringify(exampleState(schema)));
  const { longest, total } = questionTokens(schema);
  if (stateTokens + longest.tokens > STATE_AND_LONGEST_QUESTION_TOKENS_MAX) {
    const index = schema.questions.findIndex((question) => question.key === longest.key);
    issues.add(
      ['questions', index],
      `is about ${formatNumber(longest.tokens)} tokens: with the example state (about ${formatNumber(stateTokens)} tokens) ` +
        `it passes the budget of ${formatNumber(STATE_AND_LONGEST_QUESTION_TOKENS_MAX)} tokens per question`,
    );
  }
  if (stateTokens + total > STATE_AND_ALL_QUESTIONS_TOKENS_MAX) {
    issues.add(
      ['questions'],
      `are about ${formatNumber(total)} tokens together: with the example state (about ${formatNumber(stateTokens)} tokens) ` +
        `they pass the budget of ${formatNumber(STATE_AND_ALL_QUESTIONS_TOKENS_MAX)} tokens for all questions`,
    );
  }
}

export class InvalidSchemaError extends Error {
  constructor(readonly issues: SchemaIssue[]) {
    super(`invalid decision schema: ${issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ')}`);
    this.name = 'InvalidSchemaError';
  }
}

/** validateSchema for callers that hold a schema known to be valid (built-in templates, stored versions). */
export function normalizeSchema(input: unknown): NormalizedSchema {
  const result = validateSchema(input);
  if (!result.valid) throw new InvalidSchemaError(result.issues);
  return result.schema;
}
