import { ValidationIssue } from '@ds/contracts';

/**
 * Query parameters reach PostgreSQL as statement parameters, and PostgreSQL cannot store U+0000 in text: a NUL
 * in a filter would fail the statement and answer a 500. Refused here instead, for every route, the name of
 * each parameter shown with the NUL replaced.
 */
export function queryTextIssues(query: unknown): ValidationIssue[] {
  if (typeof query !== 'object' || query === null) return [];
  const issues: ValidationIssue[] = [];
  for (const [name, value] of Object.entries(query)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (name.includes('\u0000') || values.some((item) => typeof item === 'string' && item.includes('\u0000'))) {
      issues.push({ path: name.replaceAll('\u0000', '\ufffd'), message: 'contains U+0000' });
    }
  }
  return issues;
}
