import { AnchorHTMLAttributes, MouseEvent, useEffect, useState } from 'react';

const NAVIGATED = 'ds:navigated';

/**
 * A screen holding unsaved work: asked before the application moves elsewhere, it calls `proceed` once the
 * author chose to leave (or never, to stay).
 */
export type LeaveGuard = (proceed: () => void) => void;
let guard: LeaveGuard | null = null;
/** Where the application is, to return to when back/forward is held by a guard. */
let shown = typeof location === 'undefined' ? '' : location.pathname + location.search;

/** Holds navigation while `leave` is set; returns the release. Only the latest guard counts. */
export function guardNavigation(leave: LeaveGuard): () => void {
  guard = leave;
  return () => {
    if (guard === leave) guard = null;
  };
}

function go(to: string, replace: boolean): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  shown = location.pathname + location.search;
  window.dispatchEvent(new Event(NAVIGATED));
}

/** Runs `work` (which leaves the current screen) at once, or once the screen's guard lets the author go. */
export function leaveThen(work: () => void): void {
  const holding = guard;
  if (!holding) return work();
  holding(() => {
    if (guard === holding) guard = null;
    work();
  });
}

export function navigate(to: string, replace = false): void {
  if (to === shown) go(to, replace);
  else leaveThen(() => go(to, replace));
}

if (typeof window !== 'undefined') {
  window.addEventListener('popstate', () => {
    const target = location.pathname + location.search;
    if (guard && target !== shown) {
      // The browser already moved: put the address back while the author decides.
      history.pushState(null, '', shown);
      leaveThen(() => go(target, false));
      return;
    }
    shown = target;
    window.dispatchEvent(new Event(NAVIGATED));
  });
}

/** The current path and query; re-renders on back/forward and on navigate(). */
export function useLocation(): { path: string; search: string } {
  const read = () => ({ path: location.pathname, search: location.search });
  const [current, setCurrent] = useState(read);
  useEffect(() => {
    const update = () => setCurrent(read());
    window.addEventListener(NAVIGATED, update);
    return () => window.removeEventListener(NAVIGATED, update);
  }, []);
  return current;
}

/** The names of a pattern's `:name` segments: `'id' | 'view'` for `/decisions/:id/:view`. */
export type RouteParam<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | RouteParam<Rest>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** Matches `/decisions/:id/:view` style patterns; null when the path does not fit. */
export function match<P extends string>(pattern: P, path: string): Record<RouteParam<P>, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    // have is as long as want (checked above).
    const actual = have[i]!;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(actual);
    else if (part !== actual) return null;
  }
  // Every `:name` segment of the pattern was set by the loop.
  return params as Record<RouteParam<P>, string>;
}

export function Link({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={follow} {...rest} />;
}
