import type { Deployer, ReplayedExecutionView } from '@ds/contracts';
import type { ReplayAnswer, ReplayedExecution } from '@ds/decision-schema';

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

/** Items (`i`) joined with the execution they replay (`e`), for its outcome. */
export const ITEM_COLUMNS = `i.position, i.execution_id, i.replay_execution_id, i.status, i.old_action, i.old_answers, i.new_action, i.new_answers,
  i.error, i.baseline_action, i.baseline_answers, e.outcome->>'action' AS outcome_action`;

export function toReplayed(item: ItemRow): ReplayedExecution {
  return {
    old: { action: item.old_action, answers: item.old_answers },
    new: item.status === 'done' && item.new_action !== null ? { action: item.new_action, answers: item.new_answers } : null,
    outcomeAction: item.outcome_action,
  };
}

/** The same execution replayed by the active version, compared with the recorded run as the replay is. */
export function toBaseline(item: ItemRow): ReplayedExecution {
  return {
    old: { action: item.old_action, answers: item.old_answers },
    new: item.status === 'done' || item.status === 'failed' ? baselineOf(item) : null,
    outcomeAction: item.outcome_action,
  };
}

function baselineOf(item: ItemRow): ReplayedExecution['new'] {
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
