import { BROADCAST_SUBJECTS, DELIVERY_STREAM, inboxPrefixFor, SETTLEMENT_STREAM, SUBJECTS, ServiceName, WORKSPACE_EVENTS_STREAM } from './subjects';

/**
 * What each service's NATS user may publish and subscribe to: the subjects it serves (subscribe), the
 * subjects it calls (publish), its own broadcasts (both), and its own reply inboxes (`_INBOX.<service>.>`). Replies to requests it
 * serves need no publish right: the server config grants them with `allow_responses`. The Helm chart
 * renders these lists into the NATS server's authorization block (helm/decision-service/files/nats-permissions.json).
 */
export interface NatsPermissions {
  publish: string[];
  subscribe: string[];
}

/** Replies and JetStream deliveries come to the service's own inboxes, never to another's. */
const replyInbox = (service: ServiceName) => `${inboxPrefixFor(service)}.>`;
const served = (subjects: Record<string, string>) => Object.values(subjects);
const { runner, engine, billing, delivery, partner } = SUBJECTS;

/**
 * The JetStream API a service needs to declare the WORKSPACE_EVENTS stream (whoever starts first declares it)
 * and to pull from its own durable consumer of deleted workspaces.
 */
function workspaceEventsConsumer(service: ServiceName): string[] {
  const stream = WORKSPACE_EVENTS_STREAM.name;
  const consumer = WORKSPACE_EVENTS_STREAM.consumerFor(service);
  return [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.CREATE.${stream}`,
    `$JS.API.CONSUMER.INFO.${stream}.${consumer}`,
    `$JS.API.CONSUMER.CREATE.${stream}.${consumer}`,
    `$JS.API.CONSUMER.CREATE.${stream}.${consumer}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${consumer}`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
    `$JS.ACK.${stream}.${consumer}.>`,
  ];
}

export const NATS_PERMISSIONS: Record<ServiceName, NatsPermissions> = {
  gateway: {
    publish: [
      runner.run,
      runner.listDecisions,
      runner.getContract,
      runner.createDecision,
      runner.saveDraft,
      runner.deploy,
      runner.listVersions,
      runner.compareVersions,
      runner.reviewVersion,
      runner.rollback,
      runner.startReplay,
      runner.listReplays,
      runner.getReplay,
      runner.replayExecutions,
      runner.cancelReplay,
      runner.replayEligible,
      runner.getShadow,
      runner.startShadow,
      runner.promoteShadow,
      runner.stopShadow,
      runner.setEndpoint,
      runner.listExecutions,
      runner.decisionOverview,
      runner.resolveHook,
      runner.hookState,
      runner.enableHook,
      runner.disableHook,
      runner.rotateHook,
      runner.createHookSecret,
      runner.deleteHookSecret,
      runner.getDecision,
      runner.playground,
      runner.recordOutcome,
      runner.executionInput,
      runner.listReviews,
      runner.getReview,
      runner.claimReview,
      runner.releaseReview,
      runner.resolveReview,
      runner.qualityReport,
      runner.fitCalibration,
      engine.setProviderKey,
      engine.getProviderKey,
      engine.deleteProviderKey,
      engine.testProviderKey,
      engine.getSettings,
      engine.setSettings,
      billing.account,
      billing.setPlan,
      billing.grantCredits,
      billing.setSpendCap,
      billing.usageByDay,
      billing.getExecutionRetention,
      billing.setExecutionRetention,
      // Everything the delivery service serves but secret values, which only the runner's agent calls need.
      ...served(delivery).filter((subject) => subject !== delivery.resolveSecrets),
      ...served(partner),
      BROADCAST_SUBJECTS.gatewayApiKeyRevoked,
      BROADCAST_SUBJECTS.gatewayHookChanged,
      ...workspaceEventsConsumer('gateway'),
    ],
    subscribe: [replyInbox('gateway'), BROADCAST_SUBJECTS.billingPlanChanged, BROADCAST_SUBJECTS.gatewayApiKeyRevoked, BROADCAST_SUBJECTS.gatewayHookChanged],
  },
  'decision-runner': {
    // Deliveries and settlements go to JetStream as plain publishes; the stream's acknowledgement comes back to the inbox.
    publish: [
      engine.answer,
      engine.complete,
      billing.reserve,
      billing.settle,
      billing.grantLease,
      billing.account,
      billing.retention,
      delivery.resolveSecrets,
      // Names only: a review warns of headers that name a secret the workspace does not have.
      delivery.listSecrets,
      ...DELIVERY_STREAM.subjects,
      ...SETTLEMENT_STREAM.subjects,
      BROADCAST_SUBJECTS.runnerDecisionChanged,
      ...workspaceEventsConsumer('decision-runner'),
    ],
    subscribe: [replyInbox('decision-runner'), ...served(runner), BROADCAST_SUBJECTS.runnerDecisionChanged],
  },
  'engine-proxy': {
    publish: [BROADCAST_SUBJECTS.engineCredentialsChanged, ...workspaceEventsConsumer('engine-proxy')],
    subscribe: [replyInbox('engine-proxy'), ...served(engine), BROADCAST_SUBJECTS.engineCredentialsChanged],
  },
  'billing-ledger': {
    // Besides the runner: the JetStream API of its own settlements stream and consumer, and acknowledgements.
    publish: [
      runner.executionOutcomes,
      runner.leaseExecutions,
      BROADCAST_SUBJECTS.billingPlanChanged,
      '$JS.API.INFO',
      `$JS.API.STREAM.*.${SETTLEMENT_STREAM.name}`,
      `$JS.API.STREAM.MSG.GET.${SETTLEMENT_STREAM.name}`,
      `$JS.API.CONSUMER.*.${SETTLEMENT_STREAM.name}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${SETTLEMENT_STREAM.name}.>`,
      `$JS.API.CONSUMER.MSG.NEXT.${SETTLEMENT_STREAM.name}.>`,
      `$JS.ACK.${SETTLEMENT_STREAM.name}.>`,
    ],
    subscribe: [replyInbox('billing-ledger'), ...served(billing)],
  },
  delivery: {
    // The JetStream API of its own stream and consumer only, acknowledgements of its messages, and resends
    // published back into its own stream.
    publish: [
      ...DELIVERY_STREAM.subjects,
      '$JS.API.INFO',
      `$JS.API.STREAM.*.${DELIVERY_STREAM.name}`,
      `$JS.API.STREAM.MSG.GET.${DELIVERY_STREAM.name}`,
      `$JS.API.CONSUMER.*.${DELIVERY_STREAM.name}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${DELIVERY_STREAM.name}.>`,
      `$JS.API.CONSUMER.MSG.NEXT.${DELIVERY_STREAM.name}.>`,
      `$JS.ACK.${DELIVERY_STREAM.name}.>`,
      ...workspaceEventsConsumer('delivery'),
    ],
    subscribe: [replyInbox('delivery'), ...served(delivery)],
  },
  partner: {
    // The only publisher of workspace events; its own consumer removes its links and sessions.
    publish: [
      runner.copyDecisions,
      runner.listDecisions,
      billing.account,
      billing.setPlan,
      ...WORKSPACE_EVENTS_STREAM.subjects,
      `$JS.API.STREAM.UPDATE.${WORKSPACE_EVENTS_STREAM.name}`,
      ...workspaceEventsConsumer('partner'),
    ],
    subscribe: [replyInbox('partner'), ...served(partner)],
  },
};
