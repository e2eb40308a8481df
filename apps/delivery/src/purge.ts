import { Logger, PeriodicJob } from '@ds/platform';
import { DeliveriesStore } from './deliveries.store';
import { SigningSecretsService } from './signing-secrets.service';

/**
 * Deletes deliveries (with their attempts) queued more than 30 days ago, and signing secrets past their overlap.
 * Replicas may purge at once: deleting an already deleted row is a no-op.
 */
export class DeliveryPurge {
  private readonly job: PeriodicJob;

  constructor(
    private readonly store: DeliveriesStore,
    private readonly secrets: SigningSecretsService,
    intervalMs: number,
    private readonly logger: Logger,
  ) {
    this.job = new PeriodicJob(intervalMs, () => this.purge(), logger, 'could not purge old deliveries');
  }

  start(): void {
    this.job.start();
  }

  stop(): Promise<void> {
    return this.job.stop();
  }

  async purge(now = new Date()): Promise<{ deliveries: number; secrets: number }> {
    const deliveries = await this.store.purge(now);
    const secrets = await this.secrets.purgeExpired();
    if (deliveries + secrets > 0) this.logger.info({ deliveries, secrets }, 'purged deliveries past their retention and expired signing secrets');
    return { deliveries, secrets };
  }
}
