/**
 * The reviewer's inbox without React: which key does what, the resolution being composed, and how due and claim
 * times read. The screen (`screens/reviews.tsx`) only draws these and calls the API.
 */

/** What an outcome's action may be: the four actions a decision takes. */
export const REVIEW_ACTIONS = ['continue', 'block', 'escalate', 'fallback'] as const;

export type ReviewCommand =
  | { type: 'next' }
  | { type: 'previous' }
  /** Option `option` (from 0) of the field being answered. */
  | { type: 'pick'; option: number }
  | { type: 'field'; step: 1 | -1 }
  | { type: 'resolve' }
  | { type: 'release' }
  | { type: 'claim' }
  | { type: 'note' }
  /** Leave the note for the inbox's keys. */
  | { type: 'leave' };

export interface KeyPress {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
}

/**
 * What a key does in the inbox. `focus` is where it was pressed: `text` (the note, a filter) keeps every key but
 * Escape for itself; `control` (a button, a link, a radio) keeps Enter and the arrows, which act on it natively.
 */
export function reviewCommand(press: KeyPress, focus: 'text' | 'control' | 'none'): ReviewCommand | null {
  if (press.ctrlKey || press.metaKey || press.altKey) return null;
  if (focus === 'text') return press.key === 'Escape' ? { type: 'leave' } : null;
  if (focus === 'control' && (press.key === 'Enter' || press.key.startsWith('Arrow'))) return null;
  switch (press.key) {
    case 'j':
    case 'ArrowDown':
      return { type: 'next' };
    case 'k':
    case 'ArrowUp':
      return { type: 'previous' };
    case 'l':
    case 'ArrowRight':
      return { type: 'field', step: 1 };
    case 'h':
    case 'ArrowLeft':
      return { type: 'field', step: -1 };
    case 'Enter':
      return { type: 'resolve' };
    case 'Escape':
      return { type: 'release' };
    case 'c':
      return { type: 'claim' };
    case 'n':
      return { type: 'note' };
    default:
      return /^[1-9]$/.test(press.key) ? { type: 'pick', option: Number(press.key) - 1 } : null;
  }
}

/** The part of an item's answer the inbox needs. */
export interface AnswerToJudge {
  key: string;
  kind: 'choice' | 'score' | 'probability';
  outcomes: Array<string | boolean>;
  answer: string | number | boolean | null;
}

export type OutcomeValue = string | boolean;

/** One thing a reviewer answers: a question (by key) or the action (key null), with its options in digit order. */
export interface ReviewField {
  key: string | null;
  options: OutcomeValue[];
}

export function reviewFields(answers: readonly AnswerToJudge[]): ReviewField[] {
  return [...answers.map((answer) => ({ key: answer.key, options: answer.outcomes })), { key: null, options: [...REVIEW_ACTIONS] }];
}

export interface ReviewDraft {
  /** The field digits answer, an index of `reviewFields`. */
  field: number;
  answers: Record<string, OutcomeValue | null>;
  action: string | null;
}

/**
 * A resolution starts from what the machine said, so agreeing takes one key: a choice or level as answered, a
 * probability as whether it was at least even, the action taken. An answer that is not one of the outcomes (none
 * given, a run that failed) starts unanswered.
 */
export function initialDraft(answers: readonly AnswerToJudge[], action: string | null): ReviewDraft {
  const start: Record<string, OutcomeValue | null> = {};
  for (const answer of answers) {
    const value = answer.kind === 'probability' && typeof answer.answer === 'number' ? answer.answer >= 0.5 : answer.answer;
    start[answer.key] = answer.outcomes.some((outcome) => outcome === value) ? (value as OutcomeValue) : null;
  }
  return { field: 0, answers: start, action: (REVIEW_ACTIONS as readonly unknown[]).includes(action) ? action : null };
}

/** Picks option `option` of the current field and moves to the next; null when the field has no such option. */
export function pickOption(draft: ReviewDraft, fields: readonly ReviewField[], option: number): ReviewDraft | null {
  const field = fields[draft.field];
  if (!field || option < 0 || option >= field.options.length) return null;
  const value = field.options[option]!;
  const next = Math.min(draft.field + 1, fields.length - 1);
  if (field.key === null) return { ...draft, action: String(value), field: next };
  return { ...draft, answers: { ...draft.answers, [field.key]: value }, field: next };
}

/** Sets one field's value directly (a click on an option), leaving the digits where they were. */
export function setField(draft: ReviewDraft, key: string | null, value: OutcomeValue | null): ReviewDraft {
  if (key === null) return { ...draft, action: value === null ? null : String(value) };
  return { ...draft, answers: { ...draft.answers, [key]: value } };
}

export function moveField(draft: ReviewDraft, fields: readonly ReviewField[], step: 1 | -1): ReviewDraft {
  return { ...draft, field: Math.max(0, Math.min(fields.length - 1, draft.field + step)) };
}

/** The body of `POST …/resolve`: only the answers given, the action when chosen, the note when written. */
export function resolutionBody(draft: ReviewDraft, note: string): { answers: Record<string, OutcomeValue>; action?: string; note?: string } {
  const answers: Record<string, OutcomeValue> = {};
  for (const [key, value] of Object.entries(draft.answers)) if (value !== null) answers[key] = value;
  return { answers, ...(draft.action ? { action: draft.action } : {}), ...(note.trim() ? { note: note.trim() } : {}) };
}

/** The item `step` away from `current` in the queue, staying at either end; the first when none is chosen. */
export function stepItem(ids: readonly string[], current: string | null, step: 1 | -1): string | null {
  if (ids.length === 0) return null;
  const at = current === null ? -1 : ids.indexOf(current);
  if (at === -1) return ids[0]!;
  return ids[Math.max(0, Math.min(ids.length - 1, at + step))]!;
}

/** Where the reviewer goes once `done` left the queue: the item after it, or before it at the end. */
export function afterLeaving(ids: readonly string[], done: string): string | null {
  const at = ids.indexOf(done);
  if (at === -1) return ids[0] ?? null;
  return ids[at + 1] ?? ids[at - 1] ?? null;
}

export type DueTone = 'overdue' | 'soon' | 'later' | 'done';

/** How an item's due time reads now: past it, within the hour, later; a resolved item is done. */
export function dueTone(dueAt: string, now: number, resolved: boolean): DueTone {
  if (resolved) return 'done';
  const left = Date.parse(dueAt) - now;
  if (left < 0) return 'overdue';
  return left <= 60 * 60_000 ? 'soon' : 'later';
}

/** A span of time as a due badge says it: `45 min`, `3 h 20 min`, `2 d 4 h`; under a minute is `<1 min`. */
export function spanText(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes < 1) return '<1 min';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** The time a claim has left as `m:ss`, or null once it lapsed. */
export function claimLeft(expiresAt: string | null, now: number): string | null {
  if (!expiresAt) return null;
  const seconds = Math.ceil((Date.parse(expiresAt) - now) / 1000);
  if (!(seconds > 0)) return null;
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/** An outcome as a reviewer reads it: probability outcomes are yes and no. */
export function outcomeText(value: OutcomeValue | null, yes: string, no: string): string {
  if (value === null) return '—';
  if (typeof value === 'boolean') return value ? yes : no;
  return value;
}
