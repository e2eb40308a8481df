import { ResolvedHook, ResolveHookRequest, SUBJECTS } from '@ds/contracts';
import { createLogger, NatsLink, RpcClient } from '@ds/platform';
import { NatsServer, startNats } from '../../../../test/e2e/support/cluster';
import { sha256 } from '../auth/tokens';
import { GatewayConfig } from '../config';
import { HookTokens } from './hook-tokens';

/** Two gateway replicas' caches of secret-URL resolutions over one real nats-server; the runner is a table. */
const logger = createLogger('gateway', 'silent');
const config = { apiKeyCacheMax: 100 } as GatewayConfig;

let nats: NatsServer;
let linkA: NatsLink;
let linkB: NatsLink;
let links: NatsLink[] = [];
let replicaA: HookTokens;
let replicaB: HookTokens;
/** The runner's answers by token hash, and how many lookups reached it. */
const runner = new Map<string, ResolvedHook>();
let lookups = 0;
/** When set, a lookup waits for it before answering (to change things while one is in flight). */
let holdLookup: Promise<void> | null = null;

const rpc = {
  async call(subject: string, payload: ResolveHookRequest) {
    expect(subject).toBe(SUBJECTS.runner.resolveHook);
    lookups += 1;
    const answer = runner.get(payload.tokenHash) ?? null;
    if (holdLookup) await holdLookup;
    return answer;
  },
} as unknown as RpcClient;

const token = (char: string) => `whk_${char.repeat(32)}`;
const hook = (decisionId: string, secret: string | null = null): ResolvedHook => ({ workspaceId: 'ws_1', decisionId, slug: 'triage', secret });

beforeAll(async () => {
  nats = await startNats();
  [linkA, linkB] = await Promise.all([NatsLink.open(nats.url, 'gateway-a', logger), NatsLink.open(nats.url, 'gateway-b', logger)]);
  links = [linkA, linkB];
  replicaA = new HookTokens(rpc, linkA, config);
  replicaB = new HookTokens(rpc, linkB, config);
  replicaA.onModuleInit();
  replicaB.onModuleInit();
  for (const link of links) await link.connection.flush();
});

afterAll(async () => {
  replicaA?.onModuleDestroy();
  replicaB?.onModuleDestroy();
  await Promise.all(links.map((link) => link.close()));
  await nats?.stop();
});

beforeEach(() => {
  runner.clear();
  lookups = 0;
  holdLookup = null;
});

async function broadcastsDelivered(): Promise<void> {
  for (const link of links) await link.connection.flush();
}

describe('HookTokens', () => {
  it('answers malformed tokens without asking, and asks once per token after that', async () => {
    expect(await replicaA.resolve('whk_short', 'req_1')).toBeNull();
    expect(await replicaA.resolve(`dec_${'a'.repeat(32)}`, 'req_1')).toBeNull();
    expect(lookups).toBe(0);

    runner.set(sha256(token('a')), hook('dec_a'));
    expect(await replicaA.resolve(token('a'), 'req_1')).toEqual(hook('dec_a'));
    expect(await replicaA.resolve(token('a'), 'req_1')).toEqual(hook('dec_a'));
    expect(await replicaA.resolve(token('z'), 'req_1')).toBeNull();
    expect(await replicaA.resolve(token('z'), 'req_1')).toBeNull();
    expect(lookups).toBe(2);
  });

  it('drops a changed token on every replica, the one that changed it included', async () => {
    runner.set(sha256(token('b')), hook('dec_b'));
    expect(await replicaA.resolve(token('b'), 'req_1')).toEqual(hook('dec_b'));
    expect(await replicaB.resolve(token('b'), 'req_1')).toEqual(hook('dec_b'));

    // The secret changed behind the caches' back: both keep what they read until told.
    runner.set(sha256(token('b')), hook('dec_b', 'whsec_new'));
    expect((await replicaB.resolve(token('b'), 'req_1'))?.secret).toBeNull();

    await replicaA.changed([sha256(token('b'))]);
    await broadcastsDelivered();
    expect((await replicaA.resolve(token('b'), 'req_1'))?.secret).toBe('whsec_new');
    expect((await replicaB.resolve(token('b'), 'req_1'))?.secret).toBe('whsec_new');
  });

  it('does not keep a resolution that was in flight when a change arrived', async () => {
    runner.set(sha256(token('c')), hook('dec_c'));
    let release!: () => void;
    holdLookup = new Promise((resolve) => (release = resolve));
    const inFlight = replicaB.resolve(token('c'), 'req_1');
    await new Promise((resolve) => setImmediate(resolve));

    // Turned off while replica B's lookup (which saw it on) is still on its way back.
    runner.delete(sha256(token('c')));
    await replicaA.changed([sha256(token('c'))]);
    await broadcastsDelivered();
    release();
    expect(await inFlight).toEqual(hook('dec_c'));
    holdLookup = null;
    expect(await replicaB.resolve(token('c'), 'req_1')).toBeNull();
  });
});
