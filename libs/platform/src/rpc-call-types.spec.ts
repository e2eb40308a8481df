import { AccountReply, BROADCAST_SUBJECTS, SUBJECTS } from '@ds/contracts';
import { JsonText, NatsLink, publishBroadcast, RpcClient } from './nats';

/**
 * What the subject declarations enforce at compile time. These functions never run: `npm run lint`
 * type-checks them, and each `@ts-expect-error` fails the check if the line below it compiles.
 */
async function typedCalls(rpc: RpcClient): Promise<AccountReply[]> {
  // @ts-expect-error a bare string is not a declared subject
  await rpc.call('v1.billing-ledger.account', { workspaceId: 'ws_1' });
  // @ts-expect-error the request lacks a field its subject declares
  await rpc.call(SUBJECTS.billing.reserve, { workspaceId: 'ws_1' });
  // @ts-expect-error a field of the wrong type
  await rpc.call(SUBJECTS.billing.reserve, { workspaceId: 'ws_1', executionId: 7 });
  // @ts-expect-error the reply is inferred from the subject: a reservation is not an account
  const reservation: AccountReply = await rpc.call(SUBJECTS.billing.reserve, { workspaceId: 'ws_1', executionId: 'exec_1' });
  // A top-level field may be handed over as its JSON text.
  await rpc.call(SUBJECTS.runner.run, {
    workspaceId: 'ws_1',
    slug: 's',
    body: new JsonText('{}'),
    includeProbabilities: false,
    source: 'api',
    livemode: true,
    apiKeyId: null,
  });
  const account: AccountReply = await rpc.call(SUBJECTS.billing.account, { workspaceId: 'ws_1' });
  return [reservation, account];
}

function typedBroadcasts(link: NatsLink): void {
  publishBroadcast(link, BROADCAST_SUBJECTS.runnerDecisionChanged, { workspaceId: 'ws_1', slug: 's' });
  // @ts-expect-error the payload is the declared notice, not a string
  publishBroadcast(link, BROADCAST_SUBJECTS.runnerDecisionChanged, 'ws_1');
  // @ts-expect-error a request/reply subject is not a broadcast
  publishBroadcast(link, SUBJECTS.billing.account, 'ws_1');
}

describe('typed subjects', () => {
  it('are checked when the code is type-checked', () => {
    expect([typedCalls, typedBroadcasts].every((check) => typeof check === 'function')).toBe(true);
  });

  it('are plain strings at run time, so Nest routes by them as before', () => {
    expect(SUBJECTS.billing.reserve).toBe('v1.billing-ledger.reserve');
    expect(typeof BROADCAST_SUBJECTS.runnerDecisionChanged).toBe('string');
  });
});

/** The publish of a broadcast: the text of a string payload, the JSON of any other. */
describe('publishBroadcast', () => {
  const published: Array<[string, string]> = [];
  const link = { connection: { publish: (subject: string, data: string) => published.push([subject, data]) } } as unknown as NatsLink;

  it('sends a string payload as its text and a notice as JSON', () => {
    publishBroadcast(link, BROADCAST_SUBJECTS.billingPlanChanged, 'ws_1');
    publishBroadcast(link, BROADCAST_SUBJECTS.runnerDecisionChanged, { workspaceId: 'ws_1', slug: 'triage' });
    expect(published).toEqual([
      ['v1.billing-ledger.plan.changed', 'ws_1'],
      ['v1.decision-runner.decision.changed', '{"workspaceId":"ws_1","slug":"triage"}'],
    ]);
  });
});
