import { Logger } from '@ds/platform';
import { DeliveriesStore } from './deliveries.store';
import { SigningSecretsService } from './signing-secrets.service';

/**
 * Deletes deliveries (with their attempts) queued more than 30 days ago, and signing secrets past their overlap.
 * Replicas may purge at once: deleting an already deleted row is a no-op.
 */
export class DeliveryPurge {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: DeliveriesStore,
    private readonly secrets: SigningSecretsService,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.intervalMs === 0) return;
    this.timer = setInterval(() => {
      this.running = this.purge().catch((error: unknown) => this.logger.warn({ err: error }, 'could not purge old deliveries'));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  async purge(now = new Date()): Promise<{ deliveries: number; secrets: number }> {
    const deliveries = await this.store.purge(now);
    const secrets = await this.secrets.purgeExpired();
    if (deliveries + secrets > 0) this.logger.info({ deliveries, secrets }, 'purged deliveries past their retention and expired signing secrets');
    return { deliveries, secrets };
  }
}
