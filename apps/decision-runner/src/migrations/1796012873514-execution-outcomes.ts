import { MigrationInterface, QueryRunner } from 'typeorm';

export class ExecutionOutcomes1796012873514 implements MigrationInterface {
  name = 'ExecutionOutcomes1796012873514';

  async up(q: QueryRunner): Promise<void> {
    // The distributions each confidence source gave before calibration (what a fit learns from), and the outcome
    // reported afterwards: { answers, action, recorded_at }.
    await q.query('ALTER TABLE executions ADD COLUMN IF NOT EXISTS distributions jsonb, ADD COLUMN IF NOT EXISTS outcome jsonb');
    // One row per labelled answer (question and source) and one for the action: the quality report reads only
    // these narrow rows. They go with their execution, so outcomes follow the execution's retention and deletion.
    await q.query(`
      CREATE TABLE IF NOT EXISTS quality_labels (
        execution_id text NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
        decision_id text NOT NULL,
        version integer NOT NULL,
        executed_at timestamptz NOT NULL,
        question text NOT NULL,
        kind text NOT NULL,
        source text NOT NULL,
        confidence double precision,
        predicted double precision,
        observed boolean,
        correct boolean NOT NULL,
        PRIMARY KEY (execution_id, question, source)
      )`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS quality_labels_report ON quality_labels (decision_id, version, executed_at)
         INCLUDE (question, kind, source, confidence, predicted, observed, correct)`,
    );
    // A calibration fit reads the newest executions of one version that have an outcome.
    await q.query('CREATE INDEX IF NOT EXISTS executions_with_outcome ON executions (decision_id, version, seq) WHERE outcome IS NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS executions_with_outcome');
    await q.query('DROP TABLE IF EXISTS quality_labels');
    await q.query('ALTER TABLE executions DROP COLUMN IF EXISTS outcome, DROP COLUMN IF EXISTS distributions');
  }
}
