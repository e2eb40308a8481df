import { CalibrationFit, fitCalibration, LabelledExecution, NormalizedSchema, RecordedDistributions } from '@ds/decision-schema';

/**
 * Work a runner hands to its lab threads: CPU-bound steps over many rows, whose input arrives as text so that the
 * thread answering live runs never parses it.
 */
export type LabTask = {
  kind: 'fit';
  version: NormalizedSchema;
  draft: NormalizedSchema;
  /** A JSON array of `[distributions, answers]` pairs, oldest first. */
  executions: string;
};

export type LabResult<T extends LabTask> = T extends { kind: 'fit' } ? CalibrationFit : never;

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
  }
}
