import { DEFAULT_RESTART_POLICY, RestartPolicy } from './restart-policy';

const options = { firstDelayMs: 100, maxDelayMs: 1_000, crashLoopLimit: 5, crashLoopWindowMs: 60_000, stableAfterMs: 10_000 };

describe('RestartPolicy', () => {
  it('doubles the wait while a service keeps crashing, up to the cap', () => {
    const policy = new RestartPolicy({ ...options, crashLoopLimit: 100, crashLoopWindowMs: 1 });
    const delays: number[] = [];
    let now = 0;
    for (let i = 0; i < 7; i++) {
      const verdict = policy.onCrash(now, now - 50);
      if (!verdict.restart) throw new Error('gave up');
      delays.push(verdict.delayMs);
      now += 10;
    }
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('starts the backoff over after a run that lasted', () => {
    const policy = new RestartPolicy(options);
    expect(policy.onCrash(1_000, 900)).toEqual({ restart: true, delayMs: 100, recentCrashes: 1 });
    expect(policy.onCrash(2_000, 1_100)).toEqual({ restart: true, delayMs: 200, recentCrashes: 2 });
    expect(policy.onCrash(30_000, 2_200)).toEqual({ restart: true, delayMs: 100, recentCrashes: 3 });
  });

  it('gives up at the crash-loop limit within the window', () => {
    const policy = new RestartPolicy(options);
    const verdicts = [0, 1, 2, 3, 4].map((i) => policy.onCrash(i * 1_000, i * 1_000 - 10));
    expect(verdicts.slice(0, 4).every((verdict) => verdict.restart)).toBe(true);
    expect(verdicts[4]).toEqual({ restart: false, recentCrashes: 5 });
  });

  it('forgets crashes older than the window', () => {
    const policy = new RestartPolicy(options);
    for (let i = 0; i < 4; i++) expect(policy.onCrash(i * 1_000, 0).restart).toBe(true);
    // The first four fell out of the window: this is the only recent crash.
    expect(policy.onCrash(70_000, 65_000)).toEqual({ restart: true, delayMs: expect.any(Number), recentCrashes: 1 });
  });

  it('refuses nonsense settings', () => {
    expect(() => new RestartPolicy({ ...options, firstDelayMs: -1 })).toThrow(RangeError);
    expect(() => new RestartPolicy({ ...options, maxDelayMs: Number.NaN })).toThrow(RangeError);
    expect(() => new RestartPolicy({ ...options, crashLoopLimit: 0 })).toThrow(RangeError);
  });

  it('defaults to five crashes a minute', () => {
    expect(DEFAULT_RESTART_POLICY.crashLoopLimit).toBe(5);
    expect(DEFAULT_RESTART_POLICY.crashLoopWindowMs).toBe(60_000);
  });
});
