/** One difference between two JSON values, at a dotted path ("" for the root). */
export interface Change {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

/**
 * The differences between two JSON documents, depth first in key order. Arrays are compared by index, except
 * arrays of objects carrying a `key` (questions), which are matched by that key so a reordering or an
 * insertion reads as what it is rather than as every later element changing.
 */
export function jsonDiff(before: unknown, after: unknown, path = ''): Change[] {
  if (Object.is(before, after)) return [];
  if (isKeyedList(before) && isKeyedList(after)) {
    const changes: Change[] = [];
    const old = new Map(before.map((item) => [item.key as string, item]));
    const next = new Map(after.map((item) => [item.key as string, item]));
    for (const [key, item] of old) {
      if (!next.has(key)) changes.push({ path: join(path, key), kind: 'removed', before: item });
      else changes.push(...jsonDiff(item, next.get(key), join(path, key)));
    }
    for (const [key, item] of next) if (!old.has(key)) changes.push({ path: join(path, key), kind: 'added', after: item });
    return changes;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const changes: Change[] = [];
    const length = Math.max(before.length, after.length);
    for (let i = 0; i < length; i++) {
      if (i >= after.length) changes.push({ path: join(path, i), kind: 'removed', before: before[i] });
      else if (i >= before.length) changes.push({ path: join(path, i), kind: 'added', after: after[i] });
      else changes.push(...jsonDiff(before[i], after[i], join(path, i)));
    }
    return changes;
  }
  if (isObject(before) && isObject(after)) {
    const changes: Change[] = [];
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) {
      if (!(key in after)) changes.push({ path: join(path, key), kind: 'removed', before: before[key] });
      else if (!(key in before)) changes.push({ path: join(path, key), kind: 'added', after: after[key] });
      else changes.push(...jsonDiff(before[key], after[key], join(path, key)));
    }
    return changes;
  }
  return [{ path, kind: 'changed', before, after }];
}

function join(path: string, part: string | number): string {
  return path === '' ? String(part) : `${path}.${part}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isKeyedList(value: unknown): value is Array<Record<string, unknown>> {
  return Array.isArray(value) && value.length > 0 && value.every((item) => isObject(item) && typeof item.key === 'string');
}
