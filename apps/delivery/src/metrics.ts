import { Counter, Gauge, Histogram } from 'prom-client';
import { Metrics } from '@ds/platform';

/**
 * What a platform team alerts on. No label carries a workspace id: per-workspace detail is in the logs and in
 * the application's delivery list.
 */
export class DeliveryMetrics {
  readonly deliveries: Counter<'outcome'>;
  readonly attempts: Counter<'outcome'>;
  readonly attemptDuration: Histogram<'outcome'>;
  readonly throttled: Counter;
  readonly windowFallbacks: Counter;
  readonly consumerPending: Gauge<'state'>;
  readonly oldestPendingAge: Gauge;

  constructor(
    metrics: Metrics,
    sources: { consumer: () => Promise<{ undelivered: number; unacknowledged: number } | null>; oldestPendingAgeSeconds: () => Promise<number> },
  ) {
    const registers = [metrics.registry];
    this.deliveries = new Counter({
      name: 'decision_service_deliveries_total',
      help: 'Deliveries finished, by outcome: succeeded, failed (attempts used up or refused target), gone (the receiver answered 410) or dropped (its workspace was deleted)',
      labelNames: ['outcome'],
      registers,
    });
    this.attempts = new Counter({
      name: 'decision_service_delivery_attempts_total',
      help: 'Delivery attempts, by outcome: succeeded, failed, gone, timeout, refused, network',
      labelNames: ['outcome'],
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'decision_service_delivery_attempt_duration_seconds',
      help: 'Time from the start of an attempt (name resolution included) to the receiver’s answer or the failure',
      labelNames: ['outcome'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers,
    });
    this.throttled = new Counter({
      name: 'decision_service_delivery_throttled_total',
      help: 'Times a delivery waited because its workspace had used its 600 attempts of the last minute',
      registers,
    });
    this.windowFallbacks = new Counter({
      name: 'decision_service_delivery_window_fallbacks_total',
      help: 'Attempts whose 600-a-minute window was counted in this replica because Redis did not answer (the cap is per replica meanwhile)',
      registers,
    });
    this.consumerPending = new Gauge({
      name: 'decision_service_delivery_consumer_pending',
      help: 'Messages of the delivery consumer: undelivered (not yet taken by any replica: the lag) and unacknowledged (being attempted or waiting for a retry)',
      labelNames: ['state'],
      registers,
      async collect() {
        const info = await sources.consumer().catch(() => null);
        if (!info) return;
        this.set({ state: 'undelivered' }, info.undelivered);
        this.set({ state: 'unacknowledged' }, info.unacknowledged);
      },
    });
    this.oldestPendingAge = new Gauge({
      name: 'decision_service_delivery_oldest_pending_age_seconds',
      help: 'Age of the oldest delivery not yet succeeded or failed (0 when none is pending)',
      registers,
      async collect() {
        const age = await sources.oldestPendingAgeSeconds().catch(() => null);
        if (age !== null) this.set(age);
      },
    });
  }
}
