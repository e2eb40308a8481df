import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export type LabKind = 'fit';

/**
 * A workspace's turn and daily budget for heavy work, in PostgreSQL so that every runner replica sees the same
 * ones. Each is one atomic statement: two requests at once never both get the turn or both take the last run.
 */
@Injectable()
export class LabLimits {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The workspace's turn for `kind`, or null while another holds it and its lease has not lapsed. */
  async takeTurn(workspaceId: string, kind: LabKind, leaseSeconds: number): Promise<string | null> {
    const holder = randomUUID();
    // An INSERT answers its RETURNING rows alone, ON CONFLICT DO UPDATE or not.
    const [taken] = (await this.db.query(
      `INSERT INTO lab_turns (workspace_id, kind, holder, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))
         ON CONFLICT (workspace_id, kind) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
          WHERE lab_turns.expires_at <= now()
         RETURNING holder`,
      [workspaceId, kind, holder, leaseSeconds],
    )) as Array<{ holder: string }>;
    return taken ? holder : null;
  }

  /** Ends a turn; one that lapsed and was taken by another run stays that run's. */
  async endTurn(workspaceId: string, kind: LabKind, holder: string): Promise<void> {
    await this.db.query(`DELETE FROM lab_turns WHERE workspace_id = $1 AND kind = $2 AND holder = $3`, [workspaceId, kind, holder]);
  }

  /** Counts one run against today's (UTC) budget of `cap`; false when the budget is spent. */
  async spend(workspaceId: string, kind: LabKind, cap: number): Promise<boolean> {
    const counted = (await this.db.query(
      `INSERT INTO lab_budgets (workspace_id, kind, day, used) VALUES ($1, $2, (now() AT TIME ZONE 'UTC')::date, 1)
         ON CONFLICT (workspace_id, kind, day) DO UPDATE SET used = lab_budgets.used + 1
          WHERE lab_budgets.used < $3
         RETURNING used`,
      [workspaceId, kind, cap],
    )) as Array<{ used: number }>;
    return counted.length > 0;
  }

  /** Gives back a run counted today (one that failed through no doing of the caller's). */
  async giveBack(workspaceId: string, kind: LabKind): Promise<void> {
    await this.db.query(
      `UPDATE lab_budgets SET used = used - 1 WHERE workspace_id = $1 AND kind = $2 AND day = (now() AT TIME ZONE 'UTC')::date AND used > 0`,
      [workspaceId, kind],
    );
  }
}
