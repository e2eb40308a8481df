import Redis from 'ioredis';
import { LRUCache } from 'lru-cache';
import { HAND_BACK_SCRIPT, leaseCounterKey, refillShare, TAKE_UNIT_SCRIPT } from '@ds/billing';
import { SUBJECTS } from '@ds/contracts';
import { Logger, redisClient, RpcClient } from '@ds/platform';

export const LEASE_TAKER = Symbol('lease-taker');

/** A workspace the ledger granted no lease (its last decisions before an edge) is not asked again for this long. */
const NO_LEASE_QUIET_MS = 1_000;
const WORKSPACES_REMEMBERED = 10_000;
/**
 * A run that finds the counter empty while a grant for its workspace is on its way waits this long at most for it
 * before reserving on its own. A reserve is a ledger transaction on the same account row the grant waits for, so
 * under load it is no faster than the grant, and a crowd of them (every run until the grant lands) slows the grant
 * and every settlement behind it: with a 1 s engine and 1,000 runs in flight, four runs in five reserved alone.
 * Measured with 200 runs in flight on a loaded machine, a quarter second was too short: grants took half a second,
 * half the runs reserved alone, and step 6 took 0.34 s on average against 0.08 s with a second.
 */
const GRANT_WAIT_MS = 1_000;

type LeaseCommands = Redis & {
  takeUnit(key: string): Promise<[string, number, number] | null>;
  handBack(key: string, leaseId: string): Promise<number>;
};

/**
 * Step 6 from budget leases, the run's side: one script call on the workspace's lease counter takes a unit
 * (no NATS hop, no PostgreSQL statement). When the lease runs low or out, a new one is asked of the ledger in the
 * background, one request per workspace at a time, never awaited by a run. When the counter has no unit, or
 * Redis does not answer, the run reserves on its own as before: slower, never wrong.
 */
export class LeaseTaker {
  private readonly redis: LeaseCommands;
  /** The grant asked for per workspace, one at a time; settles (never rejects) when it has been answered. */
  private readonly asking = new Map<string, Promise<void>>();
  private readonly quietUntil = new LRUCache<string, number>({ max: WORKSPACES_REMEMBERED });

  constructor(
    url: string,
    private readonly rpc: RpcClient,
    private readonly logger: Logger,
  ) {
    this.redis = redisClient<LeaseCommands>(url, logger, {
      purpose: 'lease counter',
      pipelined: true,
      scripts: { takeUnit: TAKE_UNIT_SCRIPT, handBack: HAND_BACK_SCRIPT },
    });
    this.redis.connect().catch((error: unknown) => logger.warn({ err: error }, 'lease counter: Redis is not reachable yet; runs reserve one by one'));
  }

  /**
   * The lease a unit was taken from, or null when the run must reserve on its own. A run that finds the counter
   * empty while a grant is coming waits for it and tries the new lease, for GRANT_WAIT_MS at most in all (a crowd
   * of waiting runs may use up a new lease at once, and then waits for the next one).
   */
  async take(workspaceId: string): Promise<string | null> {
    let waitUntil: number | undefined;
    for (;;) {
      let reply: [string, number, number] | null;
      try {
        reply = await this.redis.takeUnit(leaseCounterKey(workspaceId));
      } catch {
        return null;
      }
      const [leaseId, left, units] = reply ?? [null, -1, 0];
      if (leaseId !== null && left >= 0) {
        // Early enough that the grant (a ledger transaction, slower under load) lands before the lease runs out;
        // the untaken rest comes back when the new lease replaces it.
        if (left < units * refillShare(this.grantMs)) void this.refill(workspaceId, leaseId, units - left);
        return leaseId;
      }
      const grant = this.refill(workspaceId, leaseId, units);
      waitUntil ??= Date.now() + GRANT_WAIT_MS;
      const msLeft = waitUntil - Date.now();
      if (grant === null || msLeft <= 0) return null;
      let timer: NodeJS.Timeout | undefined;
      const landed = await Promise.race([grant.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(resolve, msLeft, false)))]);
      clearTimeout(timer);
      if (!landed) return null;
    }
  }

  /** Gives an unbilled unit back to its lease; false when the lease no longer gives units (the ledger must free it). */
  async handBack(workspaceId: string, leaseId: string): Promise<boolean> {
    try {
      return (await this.redis.handBack(leaseCounterKey(workspaceId), leaseId)) === 1;
    } catch {
      return false;
    }
  }

  close(): void {
    this.redis.disconnect();
  }

  /** How long grants take to come back, a moving average over about the last 20 (ms). */
  private grantMs = 0;

  /** The grant on its way for the workspace, asked for now unless one already is; null while it is quiet. */
  private refill(workspaceId: string, seenLeaseId: string | null, seenTaken: number): Promise<void> | null {
    const pending = this.asking.get(workspaceId);
    if (pending) return pending;
    if ((this.quietUntil.get(workspaceId) ?? 0) > Date.now()) return null;
    const asked = performance.now();
    const grant = this.rpc
      .call(SUBJECTS.billing.grantLease, { workspaceId, seenLeaseId, seenTaken })
      .then((reply) => {
        this.grantMs += (performance.now() - asked - this.grantMs) / 20;
        if (reply.leaseId === null) this.quietUntil.set(workspaceId, Date.now() + NO_LEASE_QUIET_MS);
      })
      .catch((error: unknown) => {
        this.quietUntil.set(workspaceId, Date.now() + NO_LEASE_QUIET_MS);
        this.logger.warn({ err: error, workspaceId }, 'could not get a budget lease; runs reserve one by one');
      })
      .finally(() => this.asking.delete(workspaceId));
    this.asking.set(workspaceId, grant);
    return grant;
  }
}
