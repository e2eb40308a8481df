/**
 * The per-workspace cap on delivery attempts: at most 600 attempt starts in any 60 seconds. With Redis the
 * window is one sorted set per workspace that every delivery replica counts in, scored by Redis's own clock.
 */
export const WORKSPACE_ATTEMPTS_PER_MINUTE = 600;
export const WORKSPACE_WINDOW_MS = 60_000;

/** The Redis key of a workspace's window: a sorted set of attempt starts (score: milliseconds of Redis time). */
export function workspaceWindowKey(workspaceId: string): string {
  return `ds:delivery:window:${workspaceId}`;
}

/**
 * What the shared window answered for one attempt, `at` being Redis's time of the answer: counted then, or full
 * until `waitMs` later, when its oldest start leaves.
 */
export type WindowDecision = { counted: true; at: number } | { counted: false; at: number; waitMs: number };

/**
 * Reads the window script's reply: `[1, now]` when the attempt was counted, `[0, now, waitMs]` when the window
 * is full. Null for anything else, which the caller treats like an unreachable Redis.
 */
export function windowDecision(reply: unknown): WindowDecision | null {
  if (!Array.isArray(reply) || !reply.every((value) => Number.isSafeInteger(value))) return null;
  const [counted, at, waitMs] = reply as number[];
  if (counted === 1 && reply.length === 2 && at! >= 0) return { counted: true, at: at! };
  // A full window's oldest start is still inside it, so a wait of 0 or less would only spin; it is at least 1 ms.
  if (counted === 0 && reply.length === 3 && at! >= 0) return { counted: false, at: at!, waitMs: Math.max(1, waitMs!) };
  return null;
}
