import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { deleteInBatches, Logger, PeriodicJob, PLATFORM } from '@ds/platform';
import { GatewayConfig } from '../config';

/** Sessions deleted per statement: short statements that never near the statement timeout. */
const DELETE_BATCH = 5_000;

/**
 * Wrong sign-ins for e-mails without an account are forgotten after this long without another one; an
 * account's count is kept as long as the account, so the shorter memory of unknown e-mails only shows to
 * someone who waits this long between two guesses.
 */
export const UNKNOWN_EMAIL_ATTEMPTS_KEPT_DAYS = 30;

/**
 * Invitations are kept this long after they were sent, used or not: long past their 7 days of validity and the
 * hour their ceilings look back on.
 */
export const INVITATIONS_KEPT_DAYS = 30;

/**
 * Deletes application sessions past their expiry, and the counts of wrong sign-ins for unknown e-mails once
 * they have been idle long enough. An expired session is already refused when it is presented; this keeps
 * both tables from growing with every sign-in forever. Replicas may purge at once:
 * deleting an already deleted row is a no-op.
 */
@Injectable()
export class SessionPurge implements OnModuleInit, OnModuleDestroy {
  private readonly job: PeriodicJob;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) config: GatewayConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {
    this.job = new PeriodicJob(
      config.sessionPurgeIntervalMs,
      async () => {
        await this.purge();
        await this.purgeUnknownEmailAttempts();
        await this.purgeOldInvitations();
        await this.purgeOldSignInCodes();
      },
      logger,
      'could not delete expired sessions, old sign-in attempts, old invitations or old sign-in codes',
    );
  }

  onModuleInit(): void {
    this.job.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.job.stop();
  }

  /** Deletes every session expired before `now`; answers how many. */
  async purge(now = new Date()): Promise<number> {
    const deleted = await deleteInBatches(
      this.db,
      `DELETE FROM sessions WHERE token_hash IN (SELECT token_hash FROM sessions WHERE expires_at < $1 ORDER BY expires_at LIMIT ${DELETE_BATCH})`,
      [now],
      DELETE_BATCH,
    );
    if (deleted > 0) this.logger.info({ deleted }, 'deleted expired sessions');
    return deleted;
  }

  /** Deletes the counts of unknown e-mails whose last attempt is older than the time they are kept; answers how many. */
  async purgeUnknownEmailAttempts(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - UNKNOWN_EMAIL_ATTEMPTS_KEPT_DAYS * 86_400_000);
    return deleteInBatches(
      this.db,
      `DELETE FROM unknown_email_sign_ins WHERE email_hash IN
         (SELECT email_hash FROM unknown_email_sign_ins WHERE last_attempt_at < $1 ORDER BY last_attempt_at LIMIT ${DELETE_BATCH})`,
      [before],
      DELETE_BATCH,
    );
  }

  /** Deletes invitations sent longer ago than they are kept; answers how many. */
  async purgeOldInvitations(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - INVITATIONS_KEPT_DAYS * 86_400_000);
    return deleteInBatches(
      this.db,
      `DELETE FROM invitations WHERE id IN (SELECT id FROM invitations WHERE created_at < $1 ORDER BY created_at LIMIT ${DELETE_BATCH})`,
      [before],
      DELETE_BATCH,
    );
  }

  /** Deletes sign-in codes sent more than a day ago: past their 10 minutes and the day their limits look back on. */
  async purgeOldSignInCodes(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - 86_400_000);
    return deleteInBatches(
      this.db,
      `DELETE FROM sign_in_codes WHERE id IN (SELECT id FROM sign_in_codes WHERE created_at < $1 ORDER BY created_at LIMIT ${DELETE_BATCH})`,
      [before],
      DELETE_BATCH,
    );
  }
}
