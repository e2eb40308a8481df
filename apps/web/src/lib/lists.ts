// Moving, dropping and renaming items of the editors' lists and maps.

/** `items` with the one at `from` moved to `to`; out-of-range moves answer the list unchanged. */
export function moveItem<T>(items: readonly T[], from: number, to: number): T[] {
  if (from === to || from < 0 || to < 0 || from >= items.length || to >= items.length) return [...items];
  const next = [...items];
  next.splice(to, 0, ...next.splice(from, 1));
  return next;
}

/** Where a dragged item would go: beside the item at `over`, before it or after it. */
export interface DropPlacement {
  over: number;
  before: boolean;
}

/**
 * The placement for a pointer at height `y` over a list whose items occupy `rects` (top to bottom): the item under
 * the pointer, or the nearest one when the pointer is in a gap or past either end; before it in its upper half.
 */
export function dropPlacement(rects: ReadonlyArray<{ top: number; bottom: number }>, y: number): DropPlacement | undefined {
  let best: { index: number; distance: number } | undefined;
  rects.forEach((rect, index) => {
    const distance = y < rect.top ? rect.top - y : y > rect.bottom ? y - rect.bottom : 0;
    if (!best || distance < best.distance) best = { index, distance };
  });
  if (!best) return undefined;
  const rect = rects[best.index]!;
  return { over: best.index, before: y < (rect.top + rect.bottom) / 2 };
}

/** The index the item at `from` takes when dropped at `placement` (for `moveItem`); `from` itself when it stays. */
export function dropIndex(from: number, placement: DropPlacement): number {
  const gap = placement.before ? placement.over : placement.over + 1;
  return gap > from ? gap - 1 : gap;
}

/** `items` without the one at `index`. */
export function removeItem<T>(items: readonly T[], index: number): T[] {
  return items.filter((_, i) => i !== index);
}

/** A key not yet used in `taken`, `${stem}_1`, `${stem}_2`… */
export function freshKey(stem: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  let n = 1;
  while (used.has(`${stem}_${n}`)) n++;
  return `${stem}_${n}`;
}

/**
 * A map with one key renamed in place, the order of the others kept (headers and params are shown in order). A name
 * another entry already has is refused (the map comes back unchanged): taking it would silently drop that entry.
 */
export function renameKey<T>(map: Readonly<Record<string, T>>, from: string, to: string): Record<string, T> {
  if (to !== from && Object.prototype.hasOwnProperty.call(map, to)) return { ...map };
  const next: Record<string, T> = {};
  for (const [name, value] of Object.entries(map)) next[name === from ? to : name] = value;
  return next;
}
