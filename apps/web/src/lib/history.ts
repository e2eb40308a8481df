/**
 * Undo and redo over whole documents. Edits to one field in quick succession (typing) form one step, so undo
 * takes back a word's worth of typing rather than a single character.
 */
export interface History<T> {
  past: T[];
  present: T;
  future: T[];
  /** The field and time of the last edit, to fold typing into one step. */
  last: { group: string; at: number } | null;
}

/** Typing into one field with pauses shorter than this stays one undo step. */
export const GROUP_WINDOW_MS = 1000;
/** Older steps are dropped past this many, so a long session keeps its memory bounded. */
export const HISTORY_LIMIT = 200;

export function startHistory<T>(present: T): History<T> {
  return { past: [], present, future: [], last: null };
}

/** Records `next`; `group` names the field edited (null: a step of its own, such as a removal). */
export function record<T>(history: History<T>, next: T, group: string | null, now: number): History<T> {
  const folds = group !== null && history.last !== null && history.last.group === group && now - history.last.at < GROUP_WINDOW_MS;
  const past = folds ? history.past : [...history.past, history.present].slice(-HISTORY_LIMIT);
  return { past, present: next, future: [], last: group === null ? null : { group, at: now } };
}

export function undo<T>(history: History<T>): History<T> {
  const previous = history.past[history.past.length - 1];
  if (history.past.length === 0) return history;
  return { past: history.past.slice(0, -1), present: previous as T, future: [history.present, ...history.future], last: null };
}

export function redo<T>(history: History<T>): History<T> {
  if (history.future.length === 0) return history;
  const [next, ...rest] = history.future;
  return { past: [...history.past, history.present], present: next as T, future: rest, last: null };
}
