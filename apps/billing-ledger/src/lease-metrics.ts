import { Counter } from 'prom-client';
import { Lease } from '@ds/billing';
import { Metrics } from '@ds/platform';

/**
 * The budget leases' metrics. Grants against runs served tell whether step 6 stays on the fast path (a few grants
 * a second per busy workspace); units voided at close are runs that took a unit and were never settled, or a
 * counter lost. Without a metrics registry (tests, tools) nothing is counted.
 */
export class LeaseMetrics {
  private readonly grants: Counter<'funding'> | null = null;
  private readonly unitsGranted: Counter<'funding'> | null = null;
  private readonly unitsVoidedAtClose: Counter<'funding'> | null = null;

  constructor(metrics?: Metrics) {
    if (!metrics) return;
    this.grants = new Counter({
      name: 'decision_service_billing_lease_grants_total',
      help: 'Budget leases granted, by funding (included: the included volume; credits: overage decisions and their money)',
      labelNames: ['funding'],
      registers: [metrics.registry],
    });
    this.unitsGranted = new Counter({
      name: 'decision_service_billing_lease_units_granted_total',
      help: 'Decisions held by the budget leases granted, by funding',
      labelNames: ['funding'],
      registers: [metrics.registry],
    });
    this.unitsVoidedAtClose = new Counter({
      name: 'decision_service_billing_lease_units_voided_at_close_total',
      help: 'Decisions a lease still held when it closed, after every run that could settle against it had ended, by funding',
      labelNames: ['funding'],
      registers: [metrics.registry],
    });
  }

  granted(lease: Pick<Lease, 'funding' | 'units'>): void {
    this.grants?.inc({ funding: lease.funding });
    this.unitsGranted?.inc({ funding: lease.funding }, lease.units);
  }

  voidedAtClose(lease: Pick<Lease, 'funding'>, units: number): void {
    this.unitsVoidedAtClose?.inc({ funding: lease.funding }, units);
  }
}
