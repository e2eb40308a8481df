/**
 * NATS subjects, versioned so that a payload change ships as a new subject beside the old one.
 * Each service listens in a queue group named after itself, so replicas share the work.
 */
export const SUBJECTS = {
  runner: {
    run: 'v1.decision-runner.run',
    listDecisions: 'v1.decision-runner.decisions.list',
    getContract: 'v1.decision-runner.decisions.contract',
    createDecision: 'v1.decision-runner.decisions.create',
    saveDraft: 'v1.decision-runner.decisions.draft',
    deploy: 'v1.decision-runner.decisions.deploy',
    setEndpoint: 'v1.decision-runner.decisions.endpoint',
    listExecutions: 'v1.decision-runner.executions.list',
  },
  engine: {
    answer: 'v1.engine-proxy.answer',
  },
  billing: {
    check: 'v1.billing-ledger.check',
    commit: 'v1.billing-ledger.commit',
    account: 'v1.billing-ledger.account',
    setPlan: 'v1.billing-ledger.plan.set',
  },
  partner: {
    ping: 'v1.partner.ping',
  },
  delivery: {
    ping: 'v1.delivery.ping',
  },
} as const;

/** JetStream: deliveries are published to `deliveries.<workspace>` and consumed by the delivery service. */
export const DELIVERY_STREAM = {
  name: 'DELIVERIES',
  subjects: ['deliveries.>'],
  subjectFor: (workspaceId: string) => `deliveries.${workspaceId}`,
  consumer: 'delivery-worker',
} as const;

/** NATS header that carries the request id end to end. */
export const REQUEST_ID_HEADER = 'x-request-id';

export const SERVICE_NAMES = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
