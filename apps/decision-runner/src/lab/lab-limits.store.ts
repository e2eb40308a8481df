import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export type LabKind = 'fit';

/** A turn that ended and rests until its `expires_at`: not a holder's id, which are UUIDs. */
const RESTING = 'resting';

export type LabTurn =
  | { kind: 'taken'; holder: string }
  /** Another run of the workspace holds the turn. */
  | { kind: 'running' }
  /** The workspace's last run ended and it rests for `retryAfterSeconds` more. */
  | { kind: 'resting'; retryAfterSeconds: number };

/**
 * A workspace's turn and daily budget for heavy work, in PostgreSQL so that every runner replica sees the same
 * ones. Each is one atomic statement: two requests at once never both get the turn or both take the last run.
 */
@Injectable()
export class LabLimits {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The workspace's turn for `kind`, unless another run holds it or the last one's rest has not ended. */
  async takeTurn(workspaceId: string, kind: LabKind, leaseSeconds: number): Promise<LabTurn> {
    const holder = randomUUID();
    // An INSERT answers its RETURNING rows alone, ON CONFLICT DO UPDATE or not.
    const [taken] = (await this.db.query(
      `INSERT INTO lab_turns (workspace_id, kind, holder, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))
         ON CONFLICT (workspace_id, kind) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
          WHERE lab_turns.expires_at <= now()
         RETURNING holder`,
      [workspaceId, kind, holder, leaseSeconds],
    )) as Array<{ holder: string }>;
    if (taken) return { kind: 'taken', holder };
    const [held] = (await this.db.query(
      `SELECT holder = $3 AS resting, greatest(1, ceil(extract(epoch FROM expires_at - now())))::int AS seconds_left
         FROM lab_turns WHERE workspace_id = $1 AND kind = $2`,
      [workspaceId, kind, RESTING],
    )) as Array<{ resting: boolean; seconds_left: number }>;
    // The turn ended between the two statements: it is free now, but the caller asked while it was held.
    if (!held || !held.resting) return { kind: 'running' };
    return { kind: 'resting', retryAfterSeconds: held.seconds_left };
  }

  /**
   * Ends a turn, leaving the workspace to rest for `restSeconds` (0: free at once); a turn that lapsed and was taken
   * by another run stays that run's.
   */
  async endTurn(workspaceId: string, kind: LabKind, holder: string, restSeconds = 0): Promise<void> {
    if (restSeconds <= 0) {
      await this.db.query(`DELETE FROM lab_turns WHERE workspace_id = $1 AND kind = $2 AND holder = $3`, [workspaceId, kind, holder]);
      return;
    }
    await this.db.query(
      `UPDATE lab_turns SET holder = $4, expires_at = now() + make_interval(secs => $5)
        WHERE workspace_id = $1 AND kind = $2 AND holder = $3`,
      [workspaceId, kind, holder, RESTING, restSeconds],
    );
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
