import {
  claimUnique,
  expectArray,
  expectKey,
  expectNumber,
  expectObject,
  expectOneOf,
  expectRequired,
  expectRichText,
  expectString,
  isGiven,
} from './field-checks';
import { isRecord } from './json';
import type { Issues, Path } from './issues';
import {
  CRITERION_MAX,
  INSTRUCTIONS_MAX,
  LEVEL_LABEL_MAX,
  LEVEL_MAX,
  LEVELS_MAX,
  LEVELS_MIN,
  OPTION_DESCRIPTION_MAX,
  OPTIONS_MAX,
  OPTIONS_MIN,
  QUESTIONS_MAX,
  QUESTIONS_MIN,
} from './limits';
import { isNormalizedOther } from './normalize';
import { levelLabel } from './outcomes';
import { OTHER_OPTION, QUESTION_KINDS, type QuestionKind, type JsonValue, type RichText } from './schema-types';
import { RESERVED_STATE_FIELD } from './validate-state-schema';

/** What later parts (composites, policies, destinations) need to know about a question they refer to. */
export interface QuestionFacts {
  kind: QuestionKind;
  /** choice: the option values, `other` included; null when the options could not be read. */
  options: ReadonlySet<string> | null;
  /** score: the level labels in order; null when the levels could not be read. */
  labels: readonly string[] | null;
  hasThreshold: boolean;
}

export type QuestionIndex = ReadonlyMap<string, QuestionFacts>;

const COMMON_PROPERTIES = ['key', 'kind', 'instructions', 'minConfidence'];
const KIND_PROPERTIES: Record<QuestionKind, readonly string[]> = {
  choice: ['options'],
  score: ['levels'],
  probability: ['criterion', 'threshold'],
};
const ANY_KIND_PROPERTIES = [...COMMON_PROPERTIES, ...Object.values(KIND_PROPERTIES).flat()];

/**
 * @param stateFields the declared fields of an object state, for the backtick check; null skips the check
 *   (text and list states have no fields to name).
 */
export function validateQuestions(value: unknown, path: Path, issues: Issues, stateFields: ReadonlySet<string> | null): QuestionIndex {
  const index = new Map<string, QuestionFacts>();
  if (!isGiven(value)) {
    issues.add(path, 'is required');
    return index;
  }
  if (!expectArray(value, path, issues, { min: QUESTIONS_MIN, max: QUESTIONS_MAX, noun: 'questions' })) return index;
  const keys = new Set<string>();
  value.forEach((question, i) => {
    const questionPath = [...path, i];
    const facts = validateQuestion(question, questionPath, issues, stateFields);
    if (facts && claimUnique(keys, facts.key, [...questionPath, 'key'], issues)) index.set(facts.key, facts);
  });
  return index;
}

function validateQuestion(
  question: unknown,
  path: Path,
  issues: Issues,
  stateFields: ReadonlySet<string> | null,
): (QuestionFacts & { key: string }) | undefined {
  if (!isRecord(question)) {
    issues.add(path, 'must be an object');
    return undefined;
  }
  const kindKnown = expectRequired(question, 'kind', path, issues) && expectOneOf(question.kind, QUESTION_KINDS, [...path, 'kind'], issues);
  expectObject(question, path, issues, kindKnown ? [...COMMON_PROPERTIES, ...KIND_PROPERTIES[question.kind as QuestionKind]] : ANY_KIND_PROPERTIES);

  const keyValid = expectRequired(question, 'key', path, issues) && expectKey(question.key, [...path, 'key'], issues);
  if (
    expectRequired(question, 'instructions', path, issues) &&
    expectRichText(question.instructions, [...path, 'instructions'], issues, { min: 1, max: INSTRUCTIONS_MAX }) &&
    stateFields
  ) {
    checkBacktickedNames(question.instructions, stateFields, [...path, 'instructions'], issues);
  }
  if (isGiven(question.minConfidence)) expectNumber(question.minConfidence, [...path, 'minConfidence'], issues, { min: 0, max: 1 });
  if (!kindKnown) return undefined;

  const kind = question.kind as QuestionKind;
  const facts: QuestionFacts = { kind, options: null, labels: null, hasThreshold: false };
  if (kind === 'choice') facts.options = validateOptions(question, path, issues);
  if (kind === 'score') facts.labels = validateLevels(question, path, issues);
  if (kind === 'probability') {
    if (expectRequired(question, 'criterion', path, issues)) {
      expectRichText(question.criterion, [...path, 'criterion'], issues, { min: 1, max: CRITERION_MAX });
    }
    if (isGiven(question.threshold)) {
      facts.hasThreshold = expectNumber(question.threshold, [...path, 'threshold'], issues, { min: 0, max: 1 });
    }
  }
  return keyValid ? { ...facts, key: question.key as string } : undefined;
}

// A backticked word counts as a name only when it could be one (snake_case, optionally followed by a dotted
// path into the field, such as `customer.name`); code or phrases in backticks are left alone.
const BACKTICKED = /`([^`\n]+)`/g;
const NAME_REFERENCE = /^([a-z][a-z0-9_]*)(?:\.[A-Za-z0-9_]+)*$/;

function checkBacktickedNames(instructions: RichText, stateFields: ReadonlySet<string>, path: Path, issues: Issues): void {
  const text = typeof instructions === 'string' ? instructions : JSON.stringify(instructions);
  const reported = new Set<string>();
  for (const [, inner] of text.matchAll(BACKTICKED)) {
    // BACKTICKED's one group is not optional: every match has it.
    const name = NAME_REFERENCE.exec(inner!.trim())?.[1];
    if (!name || stateFields.has(name) || name === RESERVED_STATE_FIELD || reported.has(name)) continue;
    reported.add(name);
    issues.add(path, `\`${name}\` is not a declared state field`);
  }
}

function validateOptions(question: Record<string, unknown>, path: Path, issues: Issues): ReadonlySet<string> | null {
  const optionsPath = [...path, 'options'];
  if (!expectRequired(question, 'options', path, issues)) return null;
  if (!expectArray(question.options, optionsPath, issues, { max: Infinity, noun: 'options' })) return null;
  const options = question.options;
  // A normalized schema already ends with the reserved `other`; it is accepted there, and only there, so that
  // validating a normalized schema gives it back unchanged. It does not count toward the 2..254 options.
  const authored = isNormalizedOther(options.at(-1)) ? options.length - 1 : options.length;
  if (authored < OPTIONS_MIN || authored > OPTIONS_MAX) {
    issues.add(optionsPath, `must have ${OPTIONS_MIN} to ${OPTIONS_MAX} options, not counting "${OTHER_OPTION}" (has ${authored})`);
  }
  const values = new Set<string>();
  let readable = true;
  options.forEach((option, i) => {
    const optionPath = [...optionsPath, i];
    if (!expectObject(option, optionPath, issues, ['value', 'description'])) {
      readable = false;
      return;
    }
    if (isGiven(option.description)) {
      expectRichText(option.description, [...optionPath, 'description'], issues, { max: OPTION_DESCRIPTION_MAX });
    }
    if (!expectRequired(option, 'value', optionPath, issues) || !expectKey(option.value, [...optionPath, 'value'], issues)) {
      readable = false;
      return;
    }
    if (option.value === OTHER_OPTION && i < authored) {
      issues.add([...optionPath, 'value'], `"${OTHER_OPTION}" is reserved: every choice question gets it automatically`);
      return;
    }
    claimUnique(values, option.value, [...optionPath, 'value'], issues);
  });
  values.add(OTHER_OPTION);
  return readable ? values : null;
}

function validateLevels(question: Record<string, unknown>, path: Path, issues: Issues): readonly string[] | null {
  const levelsPath = [...path, 'levels'];
  if (!expectRequired(question, 'levels', path, issues)) return null;
  if (!expectArray(question.levels, levelsPath, issues, { min: LEVELS_MIN, max: LEVELS_MAX, noun: 'levels' })) return null;
  const labels: string[] = [];
  const seen = new Set<string>();
  // With a wrong count, "1..levels" means nothing yet: conditions on the question are then not range-checked.
  let readable = question.levels.length >= LEVELS_MIN && question.levels.length <= LEVELS_MAX;
  question.levels.forEach((level, i) => {
    const label = validateLevel(level, i, [...levelsPath, i], issues);
    if (label === undefined) {
      readable = false;
      return;
    }
    const labelPath = typeof level === 'string' ? [...levelsPath, i] : [...levelsPath, i, 'label'];
    claimUnique(seen, label, labelPath, issues);
    labels.push(label);
  });
  return readable ? labels : null;
}

/** Answers the level's label, or undefined when it cannot be told. */
function validateLevel(level: unknown, index: number, path: Path, issues: Issues): string | undefined {
  if (typeof level === 'string') return expectString(level, path, issues, { min: 1, max: LEVEL_MAX }) ? level : undefined;
  if (!isRecord(level)) {
    issues.add(path, 'must be a text, { label, description } or { label?, rubric }');
    return undefined;
  }
  const isRubric = isGiven(level.rubric);
  expectObject(level, path, issues, isRubric ? ['label', 'rubric'] : ['label', 'description']);
  if (isRubric) {
    expectRichText(level.rubric, [...path, 'rubric'], issues, { min: 1, max: LEVEL_MAX });
  } else if (isGiven(level.description)) {
    expectRichText(level.description, [...path, 'description'], issues, { max: LEVEL_MAX });
  }
  if (!isGiven(level.label)) {
    if (isRubric) return levelLabel({ rubric: level.rubric as JsonValue }, index);
    issues.add([...path, 'label'], 'is required');
    return undefined;
  }
  return expectString(level.label, [...path, 'label'], issues, { min: 1, max: LEVEL_LABEL_MAX }) ? level.label : undefined;
}
