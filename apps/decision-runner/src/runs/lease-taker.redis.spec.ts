import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { leaseCounterKey, PUT_LEASE_SCRIPT, RECLAIM_LEASE_SCRIPT } from '@ds/billing';
import { GrantLeaseRequest, SUBJECTS } from '@ds/contracts';
import { createLogger, RpcClient } from '@ds/platform';
import { LeaseTaker } from './lease-taker';

/**
 * The run's side of budget leases against the real Redis, the ledger's part played with its own scripts: units
 * are taken one by one until the lease is used up, a new lease is asked for (once per workspace at a time) when
 * it runs low, and units are handed back only while their lease still gives units.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createLogger('decision-runner', 'silent');

let redis: Redis;
const asked: GrantLeaseRequest[] = [];
let grant: (request: GrantLeaseRequest) => Promise<{ leaseId: string | null; units: number }>;
const rpc = {
  call: async (subject: string, payload: GrantLeaseRequest) => {
    expect(subject).toBe(SUBJECTS.billing.grantLease);
    asked.push(payload);
    return grant(payload);
  },
} as unknown as RpcClient;
let taker: LeaseTaker;

const putLease = (workspaceId: string, leaseId: string, units: number, ttlMs = 60_000) =>
  redis.eval(PUT_LEASE_SCRIPT, 1, leaseCounterKey(workspaceId), leaseId, units, ttlMs, 60_000);

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  taker = new LeaseTaker(REDIS_URL, rpc, logger);
  // The taker connects lazily; its first script call must find it connected.
  await new Promise((resolve) => setTimeout(resolve, 200));
});

afterAll(() => {
  taker.close();
  redis.disconnect();
});

beforeEach(() => {
  asked.length = 0;
  grant = async () => ({ leaseId: null, units: 0 });
});

describe('LeaseTaker', () => {
  it('takes exactly the units of the lease, asks for the next one when it runs low, then leaves runs to reserve', async () => {
    const workspaceId = randomUUID();
    await putLease(workspaceId, 'lease_aaaaaaaaaaaaaaaaaaaa', 8);
    const taken = await Promise.all(Array.from({ length: 12 }, () => taker.take(workspaceId)));
    expect(taken.filter((leaseId) => leaseId === 'lease_aaaaaaaaaaaaaaaaaaaa')).toHaveLength(8);
    expect(taken.filter((leaseId) => leaseId === null)).toHaveLength(4);
    await new Promise((resolve) => setImmediate(resolve));
    // One request for the workspace however many runs found the lease low (under half left), naming the lease
    // they saw and how much of it was taken then.
    expect(asked).toEqual([{ workspaceId, seenLeaseId: 'lease_aaaaaaaaaaaaaaaaaaaa', seenTaken: 5 }]);
  });

  it('asks for a first lease when the workspace has none, and not again for a while when the ledger grants none', async () => {
    const workspaceId = randomUUID();
    expect(await taker.take(workspaceId)).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await taker.take(workspaceId)).toBeNull();
    expect(asked).toEqual([{ workspaceId, seenLeaseId: null, seenTaken: 0 }]);
  });

  it('lets runs that find the lease used up wait for the grant on its way and take from the new lease', async () => {
    const workspaceId = randomUUID();
    await putLease(workspaceId, 'lease_eeeeeeeeeeeeeeeeeeee', 2);
    grant = async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await putLease(workspaceId, 'lease_ffffffffffffffffffff', 10);
      return { leaseId: 'lease_ffffffffffffffffffff', units: 10 };
    };
    const taken = await Promise.all(Array.from({ length: 6 }, () => taker.take(workspaceId)));
    expect(taken.filter((leaseId) => leaseId === 'lease_eeeeeeeeeeeeeeeeeeee')).toHaveLength(2);
    // None of the four that found the counter empty reserved on its own: they waited for the one grant.
    expect(taken.filter((leaseId) => leaseId === 'lease_ffffffffffffffffffff')).toHaveLength(4);
    expect(asked).toHaveLength(1);
  });

  it('waits for a slow grant only so long, then leaves the run to reserve', async () => {
    const workspaceId = randomUUID();
    let answer: (reply: { leaseId: string | null; units: number }) => void = () => undefined;
    grant = () => new Promise((resolve) => (answer = resolve));
    const started = Date.now();
    expect(await taker.take(workspaceId)).toBeNull();
    const waited = Date.now() - started;
    // A second, not the grant's whole time.
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(3_000);
    answer({ leaseId: null, units: 0 });
  });

  it('hands a unit back while its lease gives units, and refuses once the lease was replaced or reclaimed', async () => {
    const workspaceId = randomUUID();
    await putLease(workspaceId, 'lease_bbbbbbbbbbbbbbbbbbbb', 3);
    expect(await taker.take(workspaceId)).toBe('lease_bbbbbbbbbbbbbbbbbbbb');
    expect(await taker.handBack(workspaceId, 'lease_bbbbbbbbbbbbbbbbbbbb')).toBe(true);
    expect(await redis.hget(leaseCounterKey(workspaceId), 'left')).toBe('3');
    await taker.take(workspaceId);
    expect(await redis.eval(RECLAIM_LEASE_SCRIPT, 1, leaseCounterKey(workspaceId), 'lease_bbbbbbbbbbbbbbbbbbbb')).toBe(2);
    expect(await taker.handBack(workspaceId, 'lease_bbbbbbbbbbbbbbbbbbbb')).toBe(false);
    expect(await taker.take(workspaceId)).toBeNull();
  });

  it('gives no unit of a lease past its time', async () => {
    const workspaceId = randomUUID();
    await putLease(workspaceId, 'lease_cccccccccccccccccccc', 5, 30);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await taker.take(workspaceId)).toBeNull();
    expect(await taker.handBack(workspaceId, 'lease_cccccccccccccccccccc')).toBe(false);
    // The untaken units are still there for the ledger to reclaim.
    expect(await redis.eval(RECLAIM_LEASE_SCRIPT, 1, leaseCounterKey(workspaceId), 'lease_cccccccccccccccccccc')).toBe(5);
  });

  it('leaves runs to reserve on their own while Redis cannot be reached', async () => {
    const away = new LeaseTaker('redis://127.0.0.1:1', rpc, logger);
    try {
      expect(await away.take(randomUUID())).toBeNull();
      expect(await away.handBack(randomUUID(), 'lease_dddddddddddddddddddd')).toBe(false);
    } finally {
      away.close();
    }
    expect(asked).toEqual([]);
  });
});
