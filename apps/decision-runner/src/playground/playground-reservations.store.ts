import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { checkPlaygroundLimits, PLAYGROUND_RUNS_PER_DAY, PLAYGROUND_RUNS_PER_MINUTE } from './playground-limits';

/**
 * The playground's windows, held in PostgreSQL: the one store every runner replica already shares, and whose
 * transaction makes "count, then take a place" a single step. A reservation runs under a transaction-scoped
 * advisory lock on its workspace, so that concurrent reservations of one workspace, from any replica, queue for
 * a few milliseconds and each counts what the previous one committed; other workspaces never wait.
 */
@Injectable()
export class PlaygroundReservations {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Takes a place for run `id`, or throws 429 RATE_LIMITED (with Retry-After) when either window is full. */
  async reserve(workspaceId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('decision_runner.playground'), hashtext($1))`, [workspaceId]);
      // One statement after the lock, so that the lock is held for as little as possible. A new statement under
      // READ COMMITTED: it sees every reservation committed before the lock was granted. Times are the statement's
      // own, not the transaction's start: a reservation may have queued for the lock.
      const [usage] = (await tx.query(
        `WITH recent AS (
           SELECT count(*) FILTER (WHERE reserved_at > statement_timestamp() - interval '60 seconds')::int AS minute,
                  count(*)::int AS day,
                  EXTRACT(EPOCH FROM min(reserved_at) FILTER (WHERE reserved_at > statement_timestamp() - interval '60 seconds')
                    + interval '60 seconds' - statement_timestamp())::float8 AS minute_reset,
                  EXTRACT(EPOCH FROM min(reserved_at) + interval '1 day' - statement_timestamp())::float8 AS day_reset
             FROM playground_reservations
            WHERE workspace_id = $1 AND reserved_at > statement_timestamp() - interval '1 day'
         ), expired AS (
           DELETE FROM playground_reservations WHERE workspace_id = $1 AND reserved_at <= statement_timestamp() - interval '1 day'
         ), taken AS (
           INSERT INTO playground_reservations (id, workspace_id, reserved_at)
           SELECT $2, $1, statement_timestamp() FROM recent WHERE recent.minute < $3 AND recent.day < $4
         )
         SELECT minute, day, minute_reset, day_reset FROM recent`,
        [workspaceId, id, PLAYGROUND_RUNS_PER_MINUTE, PLAYGROUND_RUNS_PER_DAY],
      )) as Array<{ minute: number; day: number; minute_reset: number | null; day_reset: number | null }>;
      // The same figures decided the insert: under both limits the place was taken, otherwise this refuses.
      checkPlaygroundLimits({ minute: usage!.minute, day: usage!.day, minuteResetSeconds: usage!.minute_reset, dayResetSeconds: usage!.day_reset });
    });
  }

  /** Gives the place back: the run ended before its engine call was made. */
  async release(id: string): Promise<void> {
    await this.db.query(`DELETE FROM playground_reservations WHERE id = $1`, [id]);
  }
}
