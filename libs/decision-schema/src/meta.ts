import { expectString, isGiven } from './field-checks';
import { Issues, type SchemaIssue } from './issues';
import { DECISION_DESCRIPTION_MAX, DECISION_NAME_MAX, SLUG_MAX } from './limits';

/** Lowercase letters and digits in runs joined by single dashes: no leading, trailing or doubled dash. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export function isValidSlug(value: unknown): value is string {
  return typeof value === 'string' && value.length <= SLUG_MAX && SLUG_PATTERN.test(value);
}

/** A decision's name (required), description (optional) and slug (required), every issue at once. */
export function checkDecisionMeta(input: { name?: unknown; description?: unknown; slug?: unknown }): SchemaIssue[] {
  const issues = new Issues();
  if (!isGiven(input.name)) issues.add(['name'], 'is required');
  else if (expectString(input.name, ['name'], issues, { min: 1, max: DECISION_NAME_MAX }) && input.name.trim() === '') {
    // A name of spaces shows as nothing in every list.
    issues.add(['name'], 'must not be blank');
  }
  if (isGiven(input.description)) expectString(input.description, ['description'], issues, { max: DECISION_DESCRIPTION_MAX });
  if (!isGiven(input.slug)) issues.add(['slug'], 'is required');
  else if (!isValidSlug(input.slug)) {
    issues.add(['slug'], `must be up to ${SLUG_MAX} lowercase letters, digits and single dashes, not starting or ending with a dash`);
  }
  return issues.list;
}
