import type { Deployer, ReplayedExecutionView, ReplayView } from '@ds/contracts';
import { compareReplay, type NormalizedQuestion, type ReplayAnswer, type ReplayedExecution } from '@ds/decision-schema';

export interface ReplayRow {
  id: string;
  workspace_id: string;
  decision_id: string;
  version: number | null;
  schema: object;
  selection: object;
  status: 'running' | 'completed' | 'cancelled';
  /** The active version when the replay started; with no `baseline_schema`, the replay was of it and is its own baseline. */
  baseline_version: number | null;
  baseline_schema: object | null;
  started_by: Deployer | null;
  created_at: Date;
  finished_at: Date | null;
}

export interface ItemRow {
  position: number;
  execution_id: string;
  replay_execution_id: string;
  status: 'pending' | 'running' | 'done' | 'failed' | 'cancelled';
  old_action: string;
  old_answers: Record<string, ReplayAnswer> | null;
  new_action: string | null;
  new_answers: Record<string, ReplayAnswer> | null;
  error: { code: string; message: string } | null;
  baseline_action: string | null;
  baseline_answers: Record<string, ReplayAnswer> | null;
  /** The action reported as right for the replayed execution since (null while none was, or once it was purged). */
  outcome_action: string | null;
}

/** What a replay's summary reads of an item: with, when a reviewer resolved the replayed run, the reviewer's outcome. */
type ComparedItem = Pick<
  ItemRow,
  'status' | 'old_action' | 'old_answers' | 'new_action' | 'new_answers' | 'baseline_action' | 'baseline_answers' | 'outcome_action'
> & { reviewed?: ReplayedExecution['reviewed'] };

/** The order of an item's columns in the JSON text `ITEMS_SUMMARY_TEXT` (replay.store.ts) writes. */
const SUMMARY_COLUMNS = [
  'status',
  'old_action',
  'old_answers',
  'new_action',
  'new_answers',
  'baseline_action',
  'baseline_answers',
  'outcome_action',
  'reviewed',
] as const;

export interface ReplaySummary {
  progress: ReplayView['progress'];
  result: ReplayView['result'];
  /** The baseline version's comparison; null where the replay has no baseline of its own (none, or itself). */
  baseline: ReplayView['result'] | null;
}

/**
 * Counts a replay's items by status and compares the finished ones with the recorded runs, for the replayed version
 * and, given its questions, for the baseline version replayed beside it. `items` is the text `ITEMS_SUMMARY_TEXT` reads.
 */
export function summarizeReplay(
  questions: readonly NormalizedQuestion[],
  baselineQuestions: readonly NormalizedQuestion[] | null,
  items: string,
): ReplaySummary {
  const rows = (JSON.parse(items) as unknown[][]).map(
    (columns) => Object.fromEntries(SUMMARY_COLUMNS.map((name, index) => [name, columns[index] ?? null])) as unknown as ComparedItem,
  );
  const count = (status: ItemRow['status']) => rows.filter((item) => item.status === status).length;
  const finished = rows.filter((item) => item.status === 'done' || item.status === 'failed');
  return {
    progress: {
      total: rows.length,
      done: count('done'),
      failed: count('failed'),
      cancelled: count('cancelled'),
      pending: count('pending'),
      running: count('running'),
    },
    result: compareReplay(questions, finished.map(toReplayed)),
    baseline: baselineQuestions === null ? null : compareReplay(baselineQuestions, finished.map(toBaseline)),
  };
}

export function toReplayed(item: ComparedItem): ReplayedExecution {
  return {
    old: { action: item.old_action, answers: item.old_answers },
    new: item.status === 'done' && item.new_action !== null ? { action: item.new_action, answers: item.new_answers } : null,
    outcomeAction: item.outcome_action,
    reviewed: item.reviewed ?? null,
  };
}

/** The same execution replayed by the active version, compared with the recorded run as the replay is. */
export function toBaseline(item: ComparedItem): ReplayedExecution {
  return {
    old: { action: item.old_action, answers: item.old_answers },
    new: item.status === 'done' || item.status === 'failed' ? baselineOf(item) : null,
    outcomeAction: item.outcome_action,
    reviewed: item.reviewed ?? null,
  };
}

function baselineOf(item: ComparedItem): ReplayedExecution['new'] {
  return item.baseline_action === null ? null : { action: item.baseline_action, answers: item.baseline_answers };
}

export function itemView(item: ItemRow): ReplayedExecutionView {
  const ran = item.status === 'done' || item.status === 'failed';
  return {
    position: item.position,
    execution_id: item.execution_id,
    replay_execution_id: ran ? item.replay_execution_id : null,
    status: item.status,
    old: { action: item.old_action, answers: item.old_answers },
    new: item.status === 'done' && item.new_action !== null ? { action: item.new_action, answers: item.new_answers } : null,
    baseline: baselineOf(item),
    outcome_action: item.outcome_action,
    error: item.error,
  };
}
