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
    /** Secret-URL triggers (hook tokens live with the decisions they run). */
    resolveHook: 'v1.decision-runner.hooks.resolve',
    enableHook: 'v1.decision-runner.hooks.enable',
    disableHook: 'v1.decision-runner.hooks.disable',
    rotateHook: 'v1.decision-runner.hooks.rotate',
    createHookSecret: 'v1.decision-runner.hooks.secret.create',
    deleteHookSecret: 'v1.decision-runner.hooks.secret.delete',
    /** Seeds a sub-workspace: copies named deployed decisions of the partner's workspace (partner mode). */
    copyDecisions: 'v1.decision-runner.decisions.copy',
    /** One decision as the application's editor needs it: draft, revision and the active version's schema. */
    getDecision: 'v1.decision-runner.decisions.get',
    /** A run from the application's playground: the draft or a version, destinations as previews. */
    playground: 'v1.decision-runner.playground.run',
  },
  engine: {
    answer: 'v1.engine-proxy.answer',
    /** An llm destination: one free-text completion with the engine's providers, keys and slots. */
    complete: 'v1.engine-proxy.complete',
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
  delivery: {
    /** A workspace's deliveries (optionally one decision's), newest first, each with its attempts. */
    list: 'v1.delivery.deliveries.list',
    get: 'v1.delivery.deliveries.get',
    /** A failed delivery sent again: a new sequence of attempts under the same `dlv_…` id. */
    resend: 'v1.delivery.deliveries.resend',
    /** The workspace's signing secret, masked (its full value is shown once, by rotate). */
    getSigningSecret: 'v1.delivery.signing-secret.get',
    rotateSigningSecret: 'v1.delivery.signing-secret.rotate',
  },
  partner: {
    /** The operator's partner-mode switch of a workspace (`enabled`, `allowed_origins`). */
    setSettings: 'v1.partner.settings.set',
    upsertWorkspace: 'v1.partner.workspaces.upsert',
    listWorkspaces: 'v1.partner.workspaces.list',
    getWorkspace: 'v1.partner.workspaces.get',
    updateWorkspace: 'v1.partner.workspaces.update',
    deleteWorkspace: 'v1.partner.workspaces.delete',
    createEmbedSession: 'v1.partner.embed.create',
    closeEmbedSession: 'v1.partner.embed.close',
    revokeEmbedSessions: 'v1.partner.embed.revoke',
    /** Exchanges a launch ticket (once, within its 60 seconds) for the embed session's cookie token. */
    redeemTicket: 'v1.partner.embed.redeem',
    /** The live embed session a cookie token names, or null. */
    embedSession: 'v1.partner.embed.session',
  },
} as const;

/**
 * Fire-and-forget notices between replicas of one service (published and subscribed by that service only):
 * the payload is the id whose cached copy every replica drops.
 */
export const BROADCAST_SUBJECTS = {
  gatewayPlanChanged: 'v1.gateway.plan.changed',
  gatewayApiKeyRevoked: 'v1.gateway.api-key.revoked',
  /** A secret URL was turned off, rotated or had its secret changed (payload: the token's SHA-256 hex). */
  gatewayHookChanged: 'v1.gateway.hook.changed',
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
  /** Header of a resent delivery's message: the attempt sequence it starts (the runner's message is sequence 1). */
  sequenceHeader: 'ds-delivery-sequence',
  /** Message id of a resend, so that a resend published twice is one resend. */
  resendMsgId: (deliveryId: string, sequence: number) => `${deliveryId}.resend.${sequence}`,
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

/**
 * JetStream: a sub-workspace was deleted. Published by the partner service to `workspace-events.deleted.<id>`
 * with `Nats-Msg-Id` = `workspace-deleted-<id>`; every service holding rows of that workspace has its own durable
 * consumer (`workspace-deleted-<service>`) and deletes them. Deleting twice deletes nothing more, so redelivery is harmless.
 */
export const WORKSPACE_EVENTS_STREAM = {
  name: 'WORKSPACE_EVENTS',
  subjects: ['workspace-events.>'],
  deletedSubject: (workspaceId: string) => `workspace-events.deleted.${workspaceId}`,
  msgIdFor: (workspaceId: string) => `workspace-deleted-${workspaceId}`,
  consumerFor: (service: string) => `workspace-deleted-${service}`,
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
