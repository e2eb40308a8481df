import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Logger, OutcomeUnknown, PeriodicJob, PLATFORM } from '@ds/platform';

/** How long a stored response is replayed. */
const REPLAY_HOURS = 24;
/**
 * How long a reservation holds without an answer before the key may run again. Far beyond the longest
 * run (a 30 s engine deadline plus 25 s of destinations), so only a gateway that died mid-run lets go.
 */
const LEASE_MINUTES = 5;
const CLEANUP_EVERY_MS = 10 * 60_000;

export type Claim = { kind: 'run' } | { kind: 'replay'; body: string };

/** Thrown for a key whose first request is still running: the caller answers with `Retry-After: 1`. */
export class StillRunning extends ServiceError {
  constructor() {
    super('IDEMPOTENCY_CONFLICT', 'A request with this Idempotency-Key is still running; retry after a second.');
  }
}

/**
 * Idempotency keys of the run endpoint, durable in PostgreSQL so that every gateway replica, and a
 * restarted one, sees the same state. The life of a key follows the spec's table: reserved once steps 1
 * to 3 pass, freed when the run fails, stored with its response after a fresh 200, replayed for 24 hours.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnModuleDestroy {
  private readonly cleanup: PeriodicJob;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.logger) logger: Logger,
  ) {
    // One replica deletes at a time: the others would only wait on the same rows.
    this.cleanup = new PeriodicJob(CLEANUP_EVERY_MS, () => this.deleteExpired(), logger, 'could not delete expired idempotency keys', {
      oneReplica: { db, lockKey: 'gateway:idempotency-cleanup' },
    });
  }

  onModuleInit(): void {
    this.cleanup.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.cleanup.stop();
  }

  /**
   * Runs `run` at most once for the key, or replays its stored answer. A run that fails is released so a retry
   * may run again, except when its outcome is unknown (it may still finish): then the key stays reserved until
   * its lease ends. An answer is kept for replay only when `run` says so (a fresh, billed 200); otherwise the
   * key is released. Throws StillRunning while another request with the key runs.
   */
  async runOnce(
    workspaceId: string,
    key: string,
    fingerprint: string,
    run: () => Promise<{ body: string; keep: boolean }>,
  ): Promise<{ body: string; replayed: boolean }> {
    const claim = await this.claim(workspaceId, key, fingerprint);
    if (claim.kind === 'replay') return { body: claim.body, replayed: true };
    let result: { body: string; keep: boolean };
    try {
      result = await run();
    } catch (error) {
      if (!(error instanceof OutcomeUnknown)) await this.release(workspaceId, key, fingerprint);
      throw error;
    }
    if (result.keep) await this.store(workspaceId, key, fingerprint, result.body);
    else await this.release(workspaceId, key, fingerprint);
    return { body: result.body, replayed: false };
  }

  async claim(workspaceId: string, key: string, fingerprint: string): Promise<Claim> {
    // One statement decides who runs: a new key, a key whose 24 hours have passed, or a reservation
    // abandoned past its lease is (re)reserved for this request; anything else is left untouched.
    const reserved: unknown[] = await this.db.query(
      `INSERT INTO idempotency_keys (workspace_id, key, fingerprint, state, lease_until, expires_at)
       VALUES ($1, $2, $3, 'reserved', now() + make_interval(mins => $4), now() + make_interval(hours => $5))
       ON CONFLICT (workspace_id, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, state = 'reserved', lease_until = EXCLUDED.lease_until,
             expires_at = EXCLUDED.expires_at, response_body = NULL, created_at = now()
         WHERE idempotency_keys.expires_at <= now()
            OR (idempotency_keys.state = 'reserved' AND idempotency_keys.lease_until <= now())
       RETURNING 1`,
      [workspaceId, key, fingerprint, LEASE_MINUTES, REPLAY_HOURS],
    );
    if (reserved.length > 0) return { kind: 'run' };

    const [existing]: Array<{ fingerprint: string; state: 'reserved' | 'stored'; response_body: string | null }> = await this.db.query(
      'SELECT fingerprint, state, response_body FROM idempotency_keys WHERE workspace_id = $1 AND key = $2',
      [workspaceId, key],
    );
    // Freed between the two statements: the first request failed just now, so this one may run.
    if (!existing) return this.claim(workspaceId, key, fingerprint);
    if (existing.fingerprint !== fingerprint) {
      throw new ServiceError('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was used in the last 24 hours with a different request.');
    }
    if (existing.state === 'reserved') throw new StillRunning();
    return { kind: 'replay', body: existing.response_body! };
  }

  /** A fresh 200: keep its exact bytes for replays. */
  async store(workspaceId: string, key: string, fingerprint: string, body: string): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys SET state = 'stored', response_body = $4, expires_at = now() + make_interval(hours => $5)
        WHERE workspace_id = $1 AND key = $2 AND fingerprint = $3 AND state = 'reserved'`,
      [workspaceId, key, fingerprint, body, REPLAY_HOURS],
    );
  }

  /** The run failed, or ended in an engine-error fallback: the key is unused again. */
  async release(workspaceId: string, key: string, fingerprint: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2 AND fingerprint = $3 AND state = 'reserved'`, [
      workspaceId,
      key,
      fingerprint,
    ]);
  }

  private async deleteExpired(): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT 10000)`);
  }
}
