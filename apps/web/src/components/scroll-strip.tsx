import { useEffect, useLayoutEffect, useState } from 'react';
import { hiddenEdges, revealOffset } from '../lib/strip';

/** Marks the edges of the strip that have more behind them, for the stylesheet to fade. */
function mark(strip: HTMLElement): void {
  const edges = hiddenEdges(strip);
  strip.toggleAttribute('data-more-start', edges.start);
  strip.toggleAttribute('data-more-end', edges.end);
}

/**
 * Scrolls the strip (not the page: `scrollLeft` rather than `scrollIntoView`) so that its current link is wholly in
 * view, clear of the fades, which are as wide as the strip's scroll padding.
 */
function reveal(strip: HTMLElement): void {
  const current = strip.querySelector<HTMLElement>('[aria-current="page"]');
  if (!current) return;
  const box = strip.getBoundingClientRect();
  const item = current.getBoundingClientRect();
  const inset = parseFloat(getComputedStyle(strip).scrollPaddingLeft) || 0;
  strip.scrollLeft = revealOffset(strip, { start: item.left - box.left + strip.scrollLeft, width: item.width }, inset);
}

/**
 * Makes a row of links (class `strip`) scroll sideways rather than be cut when it is wider than the screen: the
 * edges with more behind them fade (`data-more-start`, `data-more-end`), and the current link (`aria-current`) is
 * scrolled into view whenever `active` changes. Returns the ref for the strip's element.
 */
export function useScrollStrip<E extends HTMLElement>(active: unknown): (element: E | null) => void {
  // A callback ref: the strip may appear after the first render (once its page has loaded).
  const [strip, setStrip] = useState<E | null>(null);

  useLayoutEffect(() => {
    if (!strip) return;
    reveal(strip);
    mark(strip);
  }, [strip, active]);

  // Labels change width with the language.
  useLayoutEffect(() => {
    if (strip) mark(strip);
  });

  useEffect(() => {
    if (!strip) return;
    let width = strip.clientWidth;
    const scrolled = () => mark(strip);
    const resized = () => {
      // A narrower window may have pushed the current link out; a window that only grew taller changes nothing.
      if (strip.clientWidth !== width) reveal(strip);
      width = strip.clientWidth;
      mark(strip);
    };
    strip.addEventListener('scroll', scrolled, { passive: true });
    window.addEventListener('resize', resized);
    return () => {
      strip.removeEventListener('scroll', scrolled);
      window.removeEventListener('resize', resized);
    };
  }, [strip]);

  return setStrip;
}
