import { type NormalizedSchema, validateSchema } from '@ds/decision-schema';
import { local, tabStorage } from './storage';

/**
 * Unsaved edits of a draft, kept in this browser until they are saved or discarded, so that a reload, a closed
 * tab or a crash loses nothing. `base` and `revision` are the saved draft the edits started from, so that a save
 * after someone else's can still be merged.
 */
export interface LocalDraft {
  doc: unknown;
  base: unknown;
  revision: number;
  /** When the editing tab last wrote it; an editing tab writes again every HEARTBEAT_MS. */
  at: string;
  /** The tab editing it: another tab open on the same decision leaves it to that tab while it is alive. */
  tab: string;
}

export const HEARTBEAT_MS = 10_000;

/** This tab's id, kept across reloads of the tab (session storage) and unlike any other tab's. */
export function thisTab(): string {
  let id = tabStorage.getItem('ds.tab');
  if (!id) {
    id = Math.random().toString(36).slice(2) + Date.now().toString(36);
    tabStorage.setItem('ds.tab', id);
  }
  return id;
}

/**
 * The unsaved edits this tab should take up: its own (after a reload), or ones another tab stopped writing (a
 * closed tab or a crashed browser); never those of a tab still editing.
 */
export function draftToRestore(draft: LocalDraft | null, tab: string, now: number): LocalDraft | null {
  if (!draft) return null;
  return draft.tab === tab || now - Date.parse(draft.at) > 2.5 * HEARTBEAT_MS ? draft : null;
}

const key = (workspaceId: string, decisionId: string) => `ds.draft.${workspaceId}.${decisionId}`;

export function readLocalDraft(workspaceId: string, decisionId: string): LocalDraft | null {
  const raw = local.getItem(key(workspaceId, decisionId));
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as LocalDraft;
    return typeof value === 'object' && value !== null && typeof value.revision === 'number' && 'doc' in value ? value : null;
  } catch {
    return null;
  }
}

export function keepLocalDraft(workspaceId: string, decisionId: string, draft: LocalDraft): void {
  try {
    local.setItem(key(workspaceId, decisionId), JSON.stringify(draft));
  } catch {
    // Over the browser's quota: the edits stay on screen and the leave guard still asks.
  }
}

export function dropLocalDraft(workspaceId: string, decisionId: string): void {
  local.removeItem(key(workspaceId, decisionId));
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The schema as the service stores it once deployed; null when it does not validate. */
export function normalizedOf(schema: unknown): NormalizedSchema | null {
  if (schema === null || schema === undefined) return null;
  const checked = validateSchema(schema);
  return checked.valid ? checked.schema : null;
}
