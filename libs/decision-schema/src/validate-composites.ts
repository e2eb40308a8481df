import { claimUnique, expectArray, expectKey, expectNumber, expectObject, expectRequired, expectString, isGiven } from './field-checks';
import type { Issues, Path } from './issues';
import { COMPOSITE_DESCRIPTION_MAX, COMPOSITES_MAX, TERMS_MAX, TERMS_MIN, WEIGHT_MAX } from './limits';
import type { QuestionIndex } from './validate-questions';

/** Answers the keys of the composites, for the conditions that refer to them. */
export function validateComposites(value: unknown, path: Path, issues: Issues, questions: QuestionIndex): ReadonlySet<string> {
  const keys = new Set<string>();
  if (!isGiven(value) || !expectArray(value, path, issues, { max: COMPOSITES_MAX, noun: 'composites' })) return keys;
  value.forEach((composite, i) => {
    const compositePath = [...path, i];
    if (!expectObject(composite, compositePath, issues, ['key', 'description', 'terms'])) return;
    if (expectRequired(composite, 'key', compositePath, issues) && expectKey(composite.key, [...compositePath, 'key'], issues)) {
      claimUnique(keys, composite.key, [...compositePath, 'key'], issues);
    }
    if (isGiven(composite.description)) {
      expectString(composite.description, [...compositePath, 'description'], issues, { max: COMPOSITE_DESCRIPTION_MAX });
    }
    const termsPath = [...compositePath, 'terms'];
    if (!expectRequired(composite, 'terms', compositePath, issues)) return;
    if (!expectArray(composite.terms, termsPath, issues, { min: TERMS_MIN, max: TERMS_MAX, noun: 'terms' })) return;
    composite.terms.forEach((term, j) => validateTerm(term, [...termsPath, j], issues, questions));
  });
  return keys;
}

function validateTerm(term: unknown, path: Path, issues: Issues, questions: QuestionIndex): void {
  if (!expectObject(term, path, issues, ['question', 'option', 'weight'])) return;
  if (expectRequired(term, 'weight', path, issues) && expectNumber(term.weight, [...path, 'weight'], issues, { min: -WEIGHT_MAX, max: WEIGHT_MAX })) {
    if (term.weight === 0) issues.add([...path, 'weight'], 'must not be 0');
  }
  if (!expectRequired(term, 'question', path, issues) || !expectKey(term.question, [...path, 'question'], issues)) return;
  const question = questions.get(term.question);
  if (!question) {
    issues.add([...path, 'question'], `refers to an unknown question "${term.question}"`);
    return;
  }
  const optionPath = [...path, 'option'];
  if (question.kind !== 'choice') {
    if (isGiven(term.option)) issues.add(optionPath, 'is only allowed on terms of choice questions');
    return;
  }
  // A choice question has no single number to weigh: the term names the option whose probability counts.
  if (!isGiven(term.option)) {
    issues.add(optionPath, 'is required on terms of choice questions');
  } else if (expectKey(term.option, optionPath, issues) && question.options && !question.options.has(term.option)) {
    issues.add(optionPath, `is not an option of "${term.question}"`);
  }
}
