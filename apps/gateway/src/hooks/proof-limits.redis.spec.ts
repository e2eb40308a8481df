import { randomBytes } from 'node:crypto';
import { ServiceError } from '@ds/contracts';
import { createLogger } from '@ds/platform';
import { openRateLimitStore, RateLimitStore } from '../limits/storage';
import { HookProofLimits, WRONG_PROOFS_PER_MINUTE } from './proof-limits';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createLogger('gateway', 'silent');

async function refusal(work: () => Promise<void> | void): Promise<ServiceError | null> {
  try {
    await work();
    return null;
  } catch (error) {
    return error as ServiceError;
  }
}

function expectBlocked(error: ServiceError | null): void {
  expect(error).toBeInstanceOf(ServiceError);
  expect(error!.code).toBe('RATE_LIMITED');
  expect(error!.details).toEqual({ retryAfter: 60 });
}

describe.each([
  ['Redis, two gateway replicas', 'redis' as const],
  ['in process, one gateway', 'memory' as const],
])('HookProofLimits over %s', (_name, kind) => {
  const stores: RateLimitStore[] = [];
  let first: HookProofLimits;
  let second: HookProofLimits;
  let prefix: string;

  beforeEach(async () => {
    prefix = `unit-${randomBytes(6).toString('hex')}`;
    const a = await openRateLimitStore(kind, REDIS_URL, logger);
    stores.push(a);
    first = new HookProofLimits(a.storage, prefix, logger, a.blockedMs);
    if (kind === 'redis') {
      const b = await openRateLimitStore(kind, REDIS_URL, logger);
      stores.push(b);
      second = new HookProofLimits(b.storage, prefix, logger, b.blockedMs);
    } else {
      second = first;
    }
  });

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.onApplicationShutdown();
  });

  it(`takes ${WRONG_PROOFS_PER_MINUTE} wrong proofs, refuses the next with Retry-After 60, then blocks the URL everywhere`, async () => {
    for (let i = 0; i < WRONG_PROOFS_PER_MINUTE; i++) expect(await refusal(() => first.wrongProof('dec_guarded'))).toBeNull();
    expect(await refusal(() => first.refuseIfBlocked('dec_guarded'))).toBeNull();
    expectBlocked(await refusal(() => first.wrongProof('dec_guarded')));
    expectBlocked(await refusal(() => first.refuseIfBlocked('dec_guarded')));
    expectBlocked(await refusal(() => second.refuseIfBlocked('dec_guarded')));
    // Other URLs keep their own budget.
    expect(await refusal(() => second.refuseIfBlocked('dec_other'))).toBeNull();
    expect(await refusal(() => second.wrongProof('dec_other'))).toBeNull();
  });
});
