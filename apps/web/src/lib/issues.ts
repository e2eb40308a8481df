import type { SchemaIssue } from '@ds/decision-schema';

/** The issues at exactly `path`. */
export function issuesAt(issues: readonly SchemaIssue[], path: string): SchemaIssue[] {
  return issues.filter((issue) => issue.path === path);
}

/** The issues at `path` or anywhere below it. */
export function issuesUnder(issues: readonly SchemaIssue[], path: string): SchemaIssue[] {
  return issues.filter((issue) => issue.path === path || issue.path.startsWith(`${path}.`));
}

/** A stable id for the control that edits `path`, so an issue in the list can focus it. */
export function fieldId(path: string): string {
  return `f-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** Sets `value` at a dotted path inside a copy of `root`, creating objects on the way. */
export function setIn<T>(root: T, path: Array<string | number>, value: unknown): T {
  const [head, ...rest] = path;
  if (head === undefined) return value as T;
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  const child = copy[head] ?? (typeof rest[0] === 'number' ? [] : {});
  if (value === undefined && rest.length === 0) {
    if (Array.isArray(copy)) copy.splice(head as number, 1);
    else delete copy[head];
  } else {
    copy[head] = setIn(child, rest, value);
  }
  return copy;
}
