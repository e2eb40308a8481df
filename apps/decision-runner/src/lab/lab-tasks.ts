import {
  CalibrationFit,
  ComparedQuestion,
  compareShadow,
  fitCalibration,
  LabelledExecution,
  NormalizedQuestion,
  NormalizedSchema,
  OutcomeValue,
  RecordedDistributions,
  ShadowComparison,
  ShadowPair,
} from '@ds/decision-schema';
import { ReplaySummary, summarizeReplay } from '../replays/replay-rows';

/**
 * Work a runner hands to its lab threads: CPU-bound steps over many rows, whose input arrives as text so that the
 * thread answering live runs never parses it.
 */
export type LabTask =
  | {
      kind: 'fit';
      version: NormalizedSchema;
      draft: NormalizedSchema;
      /** A JSON array of `[distributions, answers]` pairs, oldest first. */
      executions: string;
    }
  | {
      kind: 'replay';
      questions: NormalizedQuestion[];
      /** The baseline version's questions; null where the replay is its own baseline or has none. */
      baselineQuestions: NormalizedQuestion[] | null;
      /** The replay's items as `ITEMS_SUMMARY_TEXT` reads them. */
      items: string;
    }
  | {
      kind: 'shadow';
      questions: ComparedQuestion[];
      /** A JSON array of `[live status, action, result, metrics, outcome, shadow status, action, result, metrics]`. */
      pairs: string;
    };

export type LabResult<T extends LabTask> = T extends { kind: 'fit' }
  ? CalibrationFit
  : T extends { kind: 'shadow' }
    ? ShadowComparison
    : T extends { kind: 'replay' }
      ? ReplaySummary
      : never;

type PairColumns = [
  ShadowPair['live']['status'],
  string | null,
  Record<string, unknown> | null,
  Record<string, unknown> | null,
  { answers?: Record<string, OutcomeValue>; action?: string | null } | null,
  ShadowPair['shadow']['status'],
  string | null,
  Record<string, unknown> | null,
  Record<string, unknown> | null,
];

export function runLabTask(task: LabTask): LabResult<LabTask> {
  switch (task.kind) {
    case 'fit': {
      const pairs = JSON.parse(task.executions) as Array<[RecordedDistributions, LabelledExecution['answers']]>;
      return fitCalibration(
        task.version,
        task.draft,
        pairs.map(([distributions, answers]) => ({ distributions, answers })),
      );
    }
    case 'replay':
      return summarizeReplay(task.questions, task.baselineQuestions, task.items);
    case 'shadow': {
      const rows = JSON.parse(task.pairs) as PairColumns[];
      const pairs: ShadowPair[] = rows.map(([liveStatus, liveAction, liveResult, liveMetrics, outcome, status, action, result, metrics]) => ({
        live: { status: liveStatus, action: liveAction, result: liveResult, metrics: liveMetrics },
        shadow: { status, action, result, metrics },
        outcome: outcome ? { answers: outcome.answers ?? {}, action: outcome.action ?? null } : null,
      }));
      return compareShadow(task.questions, pairs);
    }
  }
}
