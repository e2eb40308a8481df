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
    executionOutcomes: 'v1.decision-runner.executions.outcomes',
    /** One decision as the application's editor needs it: draft, revision and the active version's schema. */
    getDecision: 'v1.decision-runner.decisions.get',
    /** A run from the application's playground: the draft or a version, destinations as previews. */
    playground: 'v1.decision-runner.playground.run',
  },
  engine: {
    answer: 'v1.engine-proxy.answer',
    /** A workspace's own provider key (Admin in the application); the key itself is never answered back. */
    setProviderKey: 'v1.engine-proxy.provider-key.set',
    getProviderKey: 'v1.engine-proxy.provider-key.get',
    deleteProviderKey: 'v1.engine-proxy.provider-key.delete',
    /** Whether the workspace's runs use its own provider key or the service's shared key. */
    getSettings: 'v1.engine-proxy.settings.get',
    setSettings: 'v1.engine-proxy.settings.set',
  },
  billing: {
    reserve: 'v1.billing-ledger.reserve',
    settle: 'v1.billing-ledger.settle',
    account: 'v1.billing-ledger.account',
    setPlan: 'v1.billing-ledger.plan.set',
    grantCredits: 'v1.billing-ledger.credits.grant',
    setSpendCap: 'v1.billing-ledger.spend-cap.set',
    /** How many days each workspace's execution log is kept (its plan's retention), for the runner's purge. */
    retention: 'v1.billing-ledger.retention',
  },
} as const;

/**
 * Fire-and-forget notices between replicas of one service (published and subscribed by that service only):
 * the payload is the id whose cached copy every replica drops.
 */
export const BROADCAST_SUBJECTS = {
  gatewayPlanChanged: 'v1.gateway.plan.changed',
  gatewayApiKeyRevoked: 'v1.gateway.api-key.revoked',
  engineCredentialsChanged: 'v1.engine-proxy.credentials.changed',
  /** A decision's slug, active version or endpoint switch changed: runners drop their cached copy (payload: workspace id and slug). */
  runnerDecisionChanged: 'v1.decision-runner.decision.changed',
} as const;

/** JetStream: deliveries are published to `deliveries.<workspace>` and consumed by the delivery service. */
export const DELIVERY_STREAM = {
  name: 'DELIVERIES',
  subjects: ['deliveries.>'],
  subjectFor: (workspaceId: string) => `deliveries.${workspaceId}`,
  consumer: 'delivery-worker',
} as const;

/**
 * JetStream: settlements (commit or release of a step-6 reservation) published by the runner to
 * `settlements.<workspace>` with `Nats-Msg-Id` = `settle-<execution id>`, posted in batches by the ledger.
 */
export const SETTLEMENT_STREAM = {
  name: 'SETTLEMENTS',
  subjects: ['settlements.>'],
  subjectFor: (workspaceId: string) => `settlements.${workspaceId}`,
  msgIdFor: (executionId: string) => `settle-${executionId}`,
  consumer: 'billing-ledger-settlements',
} as const;

/** NATS header that carries the request id end to end. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * NATS header with the moment (epoch milliseconds) the caller stops waiting. The receiver drops a request
 * that arrives after it and does no billable work past it; the services' clocks are assumed synchronised (NTP).
 */
export const DEADLINE_HEADER = 'x-deadline';

export const SERVICE_NAMES = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
