import { MigrationInterface, QueryRunner } from 'typeorm';
import { ERROR_CODE_SQL, SOURCE_GROUP_SQL } from '../executions/source-groups';

/**
 * The executions lists filter by source group (live, test, playground, replay, shadow), newest first: one index per
 * list (the workspace's, and one decision's), on the group as an expression so that no column is added and no row
 * rewritten; and one for the filter by error code, holding only the runs that have one. Built inside the migration's
 * transaction like every earlier index on `executions`: writes wait while they are built, reads do not. Only
 * additions: the previous version neither reads nor knows these indexes.
 */
export class ExecutionSourceGroups1796400000000 implements MigrationInterface {
  name = 'ExecutionSourceGroups1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS executions_workspace_group_seq ON executions (workspace_id, (${SOURCE_GROUP_SQL}), seq DESC)`);
    await q.query(`CREATE INDEX IF NOT EXISTS executions_decision_group_seq ON executions (workspace_id, decision_slug, (${SOURCE_GROUP_SQL}), seq DESC)`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS executions_workspace_error_seq ON executions (workspace_id, (${ERROR_CODE_SQL}), seq DESC) WHERE (${ERROR_CODE_SQL}) IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS executions_workspace_error_seq`);
    await q.query(`DROP INDEX IF EXISTS executions_decision_group_seq`);
    await q.query(`DROP INDEX IF EXISTS executions_workspace_group_seq`);
  }
}
