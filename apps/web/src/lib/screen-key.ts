/**
 * Which screen a path shows, as the key of the slot it is drawn in: a new screen gets a slot of its own, so the one
 * it replaces is gone at once (not kept hidden while the new one's file is fetched) and an error shown for it goes
 * with it. A decision's tabs are one screen, its page, so switching tabs keeps the page and its loaded decision.
 */
export function screenKey(path: string): string {
  const decision = /^\/decisions\/([^/]+)(?:\/[^/]*)?$/.exec(path);
  return decision && decision[1] !== 'new' ? `/decisions/${decision[1]}` : path;
}
