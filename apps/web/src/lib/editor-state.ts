import type { Change } from '@ds/decision-schema';
import { History, record, redo, startHistory, undo } from './history';

/**
 * The editor's state as one value, changed only by the actions below: the document and its undo history, the JSON
 * text shown beside it, what the saved draft is, a save in flight and what came of it, and the dialogs open. Pure, so
 * each step can be tested without a browser; the screen (screens/editor.tsx) dispatches and draws.
 */

type Json = any;

/** A removal the author is asked to confirm first. */
export interface Confirmation {
  title: string;
  body: string;
  confirmLabel: string;
  run: () => void;
}

/** A save refused because someone saved meanwhile: their draft, the three-way merge, and what each side changed. */
export interface Conflict {
  revision: number;
  /** Their decision as the service holds it now (its `draft` and `revision` among the rest). */
  theirs: Json;
  merged: Json;
  both: string[];
  theirChanges: Change[];
  myChanges: Change[];
}

export interface EditorState {
  history: History<Json>;
  /** The saved draft the edits are measured against, and its revision. */
  base: Json;
  revision: number;
  /** When unsaved edits restored from this browser were made; null once saved, discarded or replaced. */
  restoredAt: string | null;
  /** The JSON view's text: the document's, or what the author typed when it does not parse (then `jsonError`). */
  text: string;
  jsonError: string | null;
  view: 'form' | 'json';
  /** Paths the author edited, and paths of items just added, whose issues wait until edited or a save is tried. */
  touched: ReadonlySet<string>;
  fresh: ReadonlySet<string>;
  /** Every issue shown, the waiting ones too: after a save was tried. */
  showAll: boolean;
  busy: boolean;
  conflict: Conflict | null;
  error: unknown;
  notice: string | null;
  asking: Confirmation | null;
  /** Where a navigation was going when it was stopped to ask about unsaved edits. */
  leaving: (() => void) | null;
  discarding: boolean;
}

export type EditorAction =
  /** The form changed `path` (null: a change of its own, such as a removal or a merge); `added`: an item was added there. */
  | { type: 'edit'; doc: Json; path: string | null; added?: boolean; at: number }
  | { type: 'typeJson'; text: string; at: number }
  | { type: 'undo' }
  | { type: 'redo' }
  | { type: 'view'; view: 'form' | 'json' }
  | { type: 'markFresh'; path: string }
  /** A save was tried while issues remain: show them all. */
  | { type: 'showIssues' }
  | { type: 'saving' }
  | { type: 'saved'; doc: Json; revision: number; notice: string }
  | { type: 'conflict'; conflict: Conflict }
  | { type: 'failed'; error: unknown }
  /** Their draft replaces ours (after a conflict). */
  | { type: 'adopt'; draft: Json; revision: number; at: number }
  | { type: 'merge'; notice: string; at: number }
  /** The unsaved edits are dropped: back to the saved draft. */
  | { type: 'discard'; at: number }
  | { type: 'ask'; confirmation: Confirmation | null }
  | { type: 'leaving'; proceed: (() => void) | null }
  | { type: 'discarding'; open: boolean };

/** The state of an editor opened on `doc`, whose saved draft is `base` at `revision` (restored edits: `restoredAt`). */
export function initialEditorState(doc: Json, base: Json, revision: number, restoredAt: string | null): EditorState {
  return {
    history: startHistory<Json>(doc),
    base,
    revision,
    restoredAt,
    text: JSON.stringify(doc, null, 2),
    jsonError: null,
    view: 'form',
    touched: new Set(),
    fresh: new Set(),
    showAll: false,
    busy: false,
    conflict: null,
    error: null,
    notice: null,
    asking: null,
    leaving: null,
    discarding: false,
  };
}

/** `next` becomes the document as one undo step (folded with the last when `group` names the same field): text follows it. */
function replaced(state: EditorState, next: Json, group: string | null, at: number): EditorState {
  return { ...state, history: record(state.history, next, group, at), text: JSON.stringify(next, null, 2), jsonError: null, notice: null };
}

function stepped(state: EditorState, history: History<Json>): EditorState {
  if (history === state.history) return state;
  return { ...state, history, text: JSON.stringify(history.present, null, 2), jsonError: null };
}

const withPath = (paths: ReadonlySet<string>, path: string) => (paths.has(path) ? paths : new Set([...paths, path]));

export function editorReducer(state: EditorState, action: EditorAction): EditorState {
  switch (action.type) {
    case 'edit': {
      const next = replaced(state, action.doc, action.path, action.at);
      if (action.path === null) return next;
      return action.added ? { ...next, fresh: withPath(state.fresh, action.path) } : { ...next, touched: withPath(state.touched, action.path) };
    }
    case 'typeJson':
      try {
        const parsed: Json = JSON.parse(action.text);
        return { ...state, text: action.text, notice: null, history: record(state.history, parsed, 'json', action.at), jsonError: null };
      } catch (failure) {
        return { ...state, text: action.text, notice: null, jsonError: (failure as Error).message };
      }
    case 'undo':
      return stepped(state, undo(state.history));
    case 'redo':
      return stepped(state, redo(state.history));
    case 'view':
      return { ...state, view: action.view };
    case 'markFresh':
      return { ...state, fresh: withPath(state.fresh, action.path) };
    case 'showIssues':
      return { ...state, showAll: true, notice: null };
    case 'saving':
      return { ...state, busy: true, error: null };
    case 'saved':
      return { ...state, busy: false, base: action.doc, revision: action.revision, conflict: null, restoredAt: null, notice: action.notice };
    case 'conflict':
      return { ...state, busy: false, conflict: action.conflict };
    case 'failed':
      return { ...state, busy: false, error: action.error };
    case 'adopt':
      return {
        ...replaced(state, action.draft, null, action.at),
        notice: state.notice,
        base: action.draft,
        revision: action.revision,
        conflict: null,
        restoredAt: null,
      };
    case 'merge': {
      const conflict = state.conflict;
      if (conflict === null) return state;
      return {
        ...replaced(state, conflict.merged, null, action.at),
        base: conflict.theirs.draft,
        revision: conflict.revision,
        conflict: null,
        notice: action.notice,
      };
    }
    case 'discard':
      return { ...replaced(state, state.base, null, action.at), restoredAt: null, discarding: false };
    case 'ask':
      return { ...state, asking: action.confirmation };
    case 'leaving':
      return { ...state, leaving: action.proceed };
    case 'discarding':
      return { ...state, discarding: action.open };
  }
}
