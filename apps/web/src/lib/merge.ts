/**
 * A three-way merge of JSON documents: what changed from `base` in `mine` and what changed in `theirs` are both
 * kept when they touch different places. Objects merge key by key, lists of keyed objects (questions) item by
 * key, other lists item by item when neither side changed their length. A place both sides changed differently
 * is a conflict: the merge keeps mine there and names its path, so the author decides.
 */
export interface MergeResult {
  merged: unknown;
  conflicts: string[];
}

const ABSENT = Symbol('absent');
type Maybe = unknown | typeof ABSENT;

export function threeWayMerge(base: unknown, mine: unknown, theirs: unknown): MergeResult {
  const conflicts: string[] = [];
  const merged = mergeAt(base, mine, theirs, '', conflicts);
  return { merged: merged === ABSENT ? undefined : merged, conflicts };
}

function mergeAt(base: Maybe, mine: Maybe, theirs: Maybe, path: string, conflicts: string[]): Maybe {
  if (same(mine, theirs)) return mine;
  if (same(base, mine)) return theirs;
  if (same(base, theirs)) return mine;
  if (isObject(base) && isObject(mine) && isObject(theirs)) {
    const out: Record<string, unknown> = {};
    const keys = [...new Set([...Object.keys(mine), ...Object.keys(theirs)])];
    for (const key of keys) {
      const value = mergeAt(
        key in base ? base[key] : ABSENT,
        key in mine ? mine[key] : ABSENT,
        key in theirs ? theirs[key] : ABSENT,
        join(path, key),
        conflicts,
      );
      if (value !== ABSENT) out[key] = value;
    }
    return out;
  }
  if (isKeyedList(base) && isKeyedList(mine) && isKeyedList(theirs)) {
    const merged = mergeKeyed(base, mine, theirs, path, conflicts);
    if (merged) return merged;
    conflicts.push(path);
    return mine;
  }
  if (Array.isArray(base) && Array.isArray(mine) && Array.isArray(theirs) && base.length === mine.length && base.length === theirs.length) {
    return base.map((item, i) => mergeAt(item, mine[i], theirs[i], join(path, i), conflicts));
  }
  conflicts.push(path);
  return mine;
}

/**
 * Items matched by key, in the order of the side that reordered them (mine when neither did), the other side's
 * new items after; null when both sides reordered the items they share differently.
 */
function mergeKeyed(base: Keyed[], mine: Keyed[], theirs: Keyed[], path: string, conflicts: string[]): Keyed[] | null {
  const byKey = (list: Keyed[]) => new Map(list.map((item) => [item.key, item]));
  const [b, m, t] = [byKey(base), byKey(mine), byKey(theirs)];
  const order = (list: Keyed[]) =>
    list
      .map((item) => item.key)
      .filter((key) => m.has(key) && t.has(key))
      .join('\u0000');
  const theirsLead = order(mine) !== order(theirs) && order(mine) === order(base);
  if (order(mine) !== order(theirs) && !theirsLead && order(theirs) !== order(base)) return null;
  const first = theirsLead ? theirs : mine;
  const other = theirsLead ? mine : theirs;
  const seen = theirsLead ? t : m;
  const keys = [...first.map((item) => item.key), ...other.map((item) => item.key).filter((key) => !seen.has(key))];
  const out: Keyed[] = [];
  for (const key of keys) {
    const value = mergeAt(b.has(key) ? b.get(key) : ABSENT, m.has(key) ? m.get(key) : ABSENT, t.has(key) ? t.get(key) : ABSENT, join(path, key), conflicts);
    if (value !== ABSENT) out.push(value as Keyed);
  }
  return out;
}

type Keyed = Record<string, unknown> & { key: string };

function same(a: Maybe, b: Maybe): boolean {
  if (a === ABSENT || b === ABSENT) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}

function join(path: string, part: string | number): string {
  return path === '' ? String(part) : `${path}.${part}`;
}

function isObject(value: Maybe): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isKeyedList(value: Maybe): value is Keyed[] {
  return Array.isArray(value) && value.every((item) => isObject(item) && typeof item.key === 'string');
}
