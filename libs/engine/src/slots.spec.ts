import { SLOT_LEASE_MARGIN_MS, SLOT_POLL_MAX_MS, sharedKeyFingerprint, slotFreedChannel, slotLeaseMs, slotPollDelayMs, slotSetKey } from './slots';

describe('shared-key slot leases', () => {
  it('hold until the call’s deadline plus the margin', () => {
    expect(slotLeaseMs(5_000)).toBe(5_000 + SLOT_LEASE_MARGIN_MS);
    expect(slotLeaseMs(499.2)).toBe(500 + SLOT_LEASE_MARGIN_MS);
    // A call already past its deadline still gets a lease that expires by itself.
    expect(slotLeaseMs(-20)).toBe(SLOT_LEASE_MARGIN_MS);
  });

  it('poll with a doubling, jittered, capped delay that never passes the deadline', () => {
    const mid = () => 0.5;
    expect([0, 1, 2, 3, 4, 5, 20].map((attempt) => slotPollDelayMs(attempt, 10_000, mid))).toEqual([10, 20, 40, 80, 160, 200, 200]);
    expect(slotPollDelayMs(3, 10_000, () => 0)).toBe(60);
    expect(slotPollDelayMs(3, 10_000, () => 0.999999)).toBe(100);
    expect(slotPollDelayMs(10, 10_000, () => 0.999999)).toBeLessThanOrEqual(SLOT_POLL_MAX_MS * 1.25);
    expect(slotPollDelayMs(5, 7, mid)).toBe(7);
    expect(slotPollDelayMs(5, -3, mid)).toBe(0);
  });

  it('names one set per shared credential without revealing the key', () => {
    const a = sharedKeyFingerprint('openai', 'https://api.openai.com/v1', 'sk-secret-1');
    expect(a).toMatch(/^[0-9a-f]{24}$/);
    expect(sharedKeyFingerprint('openai', 'https://api.openai.com/v1/', 'sk-secret-1')).toBe(a);
    expect(sharedKeyFingerprint('openai', 'https://api.openai.com/v1', 'sk-secret-2')).not.toBe(a);
    expect(sharedKeyFingerprint('openai', 'http://127.0.0.1:9999/v1', 'sk-secret-1')).not.toBe(a);
    expect(sharedKeyFingerprint('anthropic', 'https://api.openai.com/v1', 'sk-secret-1')).not.toBe(a);
    expect(slotSetKey(a)).toBe(`ds:engine-proxy:slots:${a}`);
    expect(slotFreedChannel(a)).toBe(`ds:engine-proxy:slots-freed:${a}`);
    expect(slotSetKey(a)).not.toContain('secret');
  });
});
