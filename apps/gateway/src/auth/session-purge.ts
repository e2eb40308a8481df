import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Logger, PLATFORM, rowsAffected } from '@ds/platform';
import { GatewayConfig } from '../config';

/** Sessions deleted per statement: short statements that never near the statement timeout. */
const DELETE_BATCH = 5_000;

/**
 * Deletes application sessions past their expiry. An expired session is already refused when it is
 * presented; this keeps the table from growing with every sign-in forever. Replicas may purge at once:
 * deleting an already deleted row is a no-op.
 */
@Injectable()
export class SessionPurge implements OnModuleInit, OnModuleDestroy {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: GatewayConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    if (this.config.sessionPurgeIntervalMs === 0) return;
    this.timer = setInterval(() => {
      this.purge().catch((error: unknown) => this.logger.warn({ err: error }, 'could not delete expired sessions'));
    }, this.config.sessionPurgeIntervalMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Deletes every session expired before `now`; answers how many. */
  async purge(now = new Date()): Promise<number> {
    let deleted = 0;
    for (;;) {
      const count = rowsAffected(
        await this.db.query(
          `DELETE FROM sessions WHERE token_hash IN (SELECT token_hash FROM sessions WHERE expires_at < $1 ORDER BY expires_at LIMIT ${DELETE_BATCH})`,
          [now],
        ),
      );
      deleted += count;
      if (count < DELETE_BATCH) break;
    }
    if (deleted > 0) this.logger.info({ deleted }, 'deleted expired sessions');
    return deleted;
  }
}
