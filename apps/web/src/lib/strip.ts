/**
 * A strip of links that scrolls sideways when it is wider than its box (the navigation and a decision's tabs on a
 * narrow screen): which edges have more behind them, and where to scroll so that the current link is in view.
 * Offsets are CSS pixels along the strip, as `scrollLeft`, `offsetLeft` and `clientWidth` give them.
 */
export interface StripView {
  scrollLeft: number;
  clientWidth: number;
  scrollWidth: number;
}

/** Whether links hide before the start and past the end; half a pixel of rounding is not "more". */
export function hiddenEdges(view: StripView): { start: boolean; end: boolean } {
  const max = view.scrollWidth - view.clientWidth;
  if (max <= 0.5) return { start: false, end: false };
  return { start: view.scrollLeft > 0.5, end: view.scrollLeft < max - 0.5 };
}

/**
 * Where to scroll so that an item lies wholly inside the strip, clear of the fades (`inset` at each edge). An item
 * already in view leaves the strip where it is; otherwise its start is put just after the start fade (where the
 * strip snaps too), within the strip's scroll range.
 */
export function revealOffset(view: StripView, item: { start: number; width: number }, inset = 0): number {
  const visibleStart = view.scrollLeft + inset;
  const visibleEnd = view.scrollLeft + view.clientWidth - inset;
  if (item.start >= visibleStart && item.start + item.width <= visibleEnd) return view.scrollLeft;
  const max = Math.max(0, view.scrollWidth - view.clientWidth);
  return Math.min(max, Math.max(0, item.start - inset));
}
