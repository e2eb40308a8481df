import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import { ServiceError } from '@ds/contracts';
import { createLogger } from '@ds/platform';
import { CredentialLimitsConfig } from '../config';
import { CredentialLimits, secondsToWait } from './credential-limits';

const LIMITS: CredentialLimitsConfig = {
  addressWindowSeconds: 600,
  authFailuresPerAddress: 3,
  signUpsPerAddress: 2,
  signInsPerAddress: 4,
  operatorRequestsPerAddress: 2,
  attemptsPerAccount: 3,
};

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ServiceError)) throw new Error(`expected a ServiceError, got ${String(error)}`);
  return error;
}

const wrongKey = () => Promise.reject(new ServiceError('INVALID_API_KEY', 'unknown key'));

describe('secondsToWait', () => {
  it('lets a count through up to its limit', () => {
    expect(secondsToWait({ totalHits: 3, timeToExpire: 40, isBlocked: false, timeToBlockExpire: 0 }, 3)).toBeNull();
  });

  it('asks to wait for the block, or for the window when the store did not block', () => {
    expect(secondsToWait({ totalHits: 4, timeToExpire: 40, isBlocked: true, timeToBlockExpire: 600 }, 3)).toBe(600);
    expect(secondsToWait({ totalHits: 4, timeToExpire: 40, isBlocked: false, timeToBlockExpire: 0 }, 3)).toBe(40);
    expect(secondsToWait({ totalHits: 9, timeToExpire: 0, isBlocked: true, timeToBlockExpire: 0 }, 3)).toBe(1);
  });
});

describe('CredentialLimits', () => {
  let storage: ThrottlerStorageService;
  let limits: CredentialLimits;

  beforeEach(() => {
    storage = new ThrottlerStorageService();
    limits = new CredentialLimits(storage, LIMITS, 'unit', createLogger('gateway', 'silent'));
  });

  afterEach(() => storage.onApplicationShutdown());

  it('refuses sign-ups past the per-address limit with 429 and a wait, and counts each address apart', async () => {
    await limits.beforeSignUp('198.51.100.1', 'a@example.com');
    await limits.beforeSignUp('198.51.100.1', 'b@example.com');
    const refused = await refusal(limits.beforeSignUp('198.51.100.1', 'c@example.com'));
    expect(refused.code).toBe('RATE_LIMITED');
    expect(refused.details).toEqual({ retryAfter: 600 });
    await expect(limits.beforeSignUp('198.51.100.2', 'c@example.com')).resolves.toBeUndefined();
  });

  it('counts sign-in attempts per e-mail whatever its case, across addresses', async () => {
    await limits.beforeSignIn('198.51.100.1', 'Someone@Example.com');
    await limits.beforeSignIn('198.51.100.2', 'someone@example.com');
    await limits.beforeSignUp('198.51.100.3', 'SOMEONE@example.com');
    const refused = await refusal(limits.beforeSignIn('198.51.100.4', 'someone@example.com'));
    expect(refused.message).toMatch(/this e-mail/);
    expect(refused.details).toEqual({ retryAfter: 60 });
    await expect(limits.beforeSignIn('198.51.100.4', 'other@example.com')).resolves.toBeUndefined();
  });

  it('refuses operator requests past the per-address limit', async () => {
    await limits.beforeOperatorRequest('198.51.100.1');
    await limits.beforeOperatorRequest('198.51.100.1');
    expect((await refusal(limits.beforeOperatorRequest('198.51.100.1'))).code).toBe('RATE_LIMITED');
  });

  it('stops looking credentials up for an address past its failures, and only for that address', async () => {
    let lookups = 0;
    const lookup = () => {
      lookups++;
      return wrongKey();
    };
    for (let i = 0; i < 4; i++) expect((await refusal(limits.authenticate('198.51.100.9', 'svc_live_x', lookup))).code).toBe('INVALID_API_KEY');
    expect(lookups).toBe(4);
    for (let i = 0; i < 20; i++) {
      const refused = await refusal(limits.authenticate('198.51.100.9', 'svc_live_x', lookup));
      expect(refused.code).toBe('RATE_LIMITED');
      expect((refused.details as { retryAfter: number }).retryAfter).toBeGreaterThanOrEqual(599);
    }
    expect(lookups).toBe(4);
    await expect(limits.authenticate('198.51.100.10', 'svc_live_y', async () => 'key')).resolves.toBe('key');
    expect((await refusal(limits.beforeOperatorRequest('198.51.100.9'))).code).toBe('RATE_LIMITED');
  });

  it('counts neither requests without a credential nor refusals other than 401', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await refusal(limits.authenticate('198.51.100.9', null, wrongKey))).code).toBe('INVALID_API_KEY');
      const forbidden = () => Promise.reject(new ServiceError('FORBIDDEN', 'not here'));
      expect((await refusal(limits.authenticate('198.51.100.9', 'ses_x', forbidden))).code).toBe('FORBIDDEN');
    }
    await expect(limits.authenticate('198.51.100.9', 'svc_live_x', async () => 'key')).resolves.toBe('key');
  });

  it('still answers 401 when the store cannot count', async () => {
    const broken: ThrottlerStorage = { increment: () => Promise.reject(new Error('store away')) };
    const withoutStore = new CredentialLimits(broken, LIMITS, 'unit', createLogger('gateway', 'silent'));
    expect((await refusal(withoutStore.authenticate('198.51.100.9', 'svc_live_x', wrongKey))).code).toBe('INVALID_API_KEY');
  });
});
