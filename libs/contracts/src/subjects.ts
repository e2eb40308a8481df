import { BILLING_BROADCASTS, BILLING_SUBJECTS } from './billing-ledger';
import { RUNNER_BROADCASTS, RUNNER_SUBJECTS } from './decision-runner';
import { DELIVERY_SUBJECTS } from './delivery';
import { ENGINE_BROADCASTS, ENGINE_SUBJECTS } from './engine-proxy';
import { GATEWAY_BROADCASTS } from './gateway';
import { PARTNER_SUBJECTS } from './partner';

/**
 * NATS subjects, versioned so that a payload change ships as a new subject beside the old one. Each is
 * declared with its request and reply types in the file of the service that serves it.
 * Each service listens in a queue group named after itself, so replicas share the work.
 */
export const SUBJECTS = {
  runner: RUNNER_SUBJECTS,
  engine: ENGINE_SUBJECTS,
  billing: BILLING_SUBJECTS,
  delivery: DELIVERY_SUBJECTS,
  partner: PARTNER_SUBJECTS,
} as const;

/**
 * Fire-and-forget notices that a cached copy is stale, each declared with its payload type in the file of the
 * service that owns the data and publishes it: between replicas of one service, and the ledger's plan changes,
 * which the gateway hears.
 */
export const BROADCAST_SUBJECTS = {
  billingPlanChanged: BILLING_BROADCASTS.planChanged,
  gatewayApiKeyRevoked: GATEWAY_BROADCASTS.apiKeyRevoked,
  gatewayHookChanged: GATEWAY_BROADCASTS.hookChanged,
  engineCredentialsChanged: ENGINE_BROADCASTS.credentialsChanged,
  runnerDecisionChanged: RUNNER_BROADCASTS.decisionChanged,
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
  /** Where a runner publishes a BillingSettlementBatch (`batch` is never a workspace id, which are UUIDs). */
  batchSubject: 'settlements.batch',
  msgIdFor: (executionId: string) => `settle-${executionId}`,
  consumer: 'billing-ledger-settlements',
} as const;

/**
 * JetStream: a workspace was deleted (a partner's sub-workspace, or one its Owner deleted). Published by the partner service to `workspace-events.deleted.<id>`
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

/**
 * The prefix of a NATS client's reply inboxes, named after the client (`_INBOX.gateway`): each service may
 * subscribe to its own inboxes only, so a service cannot read the answers meant for another.
 */
export function inboxPrefixFor(clientName: string): string {
  return `_INBOX.${clientName.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
