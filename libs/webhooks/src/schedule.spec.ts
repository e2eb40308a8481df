import { classifyStatus, MAX_ATTEMPTS, parseRetryAfter, RETRY_AFTER_CAP_MS, RETRY_DELAYS_MS, RETRY_JITTER, retryDelayMs } from './schedule';

describe('retry schedule', () => {
  it('is 6 attempts over about 7 hours', () => {
    expect(MAX_ATTEMPTS).toBe(6);
    expect(RETRY_DELAYS_MS).toHaveLength(MAX_ATTEMPTS - 1);
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(6.5 * 3600_000);
    expect(total).toBeLessThan(7.5 * 3600_000);
    const withMostJitter = total * (1 + RETRY_JITTER);
    expect(withMostJitter).toBeLessThan(8 * 3600_000);
  });

  it('waits the scheduled delay with the random draw in the middle', () => {
    RETRY_DELAYS_MS.forEach((delay, i) => expect(retryDelayMs(i + 1, { scale: 1, random: 0.5 })).toBe(delay));
  });

  it('spreads each delay by the jitter either way', () => {
    expect(retryDelayMs(1, { scale: 1, random: 0 })).toBe(Math.round(5_000 * (1 - RETRY_JITTER)));
    expect(retryDelayMs(1, { scale: 1, random: 0.999999 })).toBeCloseTo(5_000 * (1 + RETRY_JITTER), -1);
  });

  it('has no delay after the last attempt or for nonsense', () => {
    expect(retryDelayMs(MAX_ATTEMPTS, { scale: 1, random: 0.5 })).toBeNull();
    expect(retryDelayMs(0, { scale: 1, random: 0.5 })).toBeNull();
    expect(retryDelayMs(1.5, { scale: 1, random: 0.5 })).toBeNull();
  });

  it('scales the schedule for tests', () => {
    expect(retryDelayMs(5, { scale: 0.001, random: 0.5 })).toBe(Math.round(4.5 * 3600_000 * 0.001));
  });

  it('honours a longer Retry-After, up to the cap, and never shortens the schedule', () => {
    expect(retryDelayMs(1, { scale: 1, random: 0.5, retryAfterMs: 60_000 })).toBe(60_000);
    expect(retryDelayMs(1, { scale: 1, random: 0.5, retryAfterMs: 1_000 })).toBe(5_000);
    expect(retryDelayMs(1, { scale: 1, random: 0.5, retryAfterMs: 100 * 3600_000 })).toBe(RETRY_AFTER_CAP_MS);
    expect(retryDelayMs(1, { scale: 0.001, random: 0.5, retryAfterMs: 100 * 3600_000 })).toBe(RETRY_AFTER_CAP_MS * 0.001);
    expect(retryDelayMs(5, { scale: 1, random: 0.5, retryAfterMs: 100 * 3600_000 })).toBe(4.5 * 3600_000);
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['120', 120_000],
    [' 3 ', 3_000],
    ['0', 0],
    ['Thu, 01 Jan 2026 00:01:00 GMT', 60_000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['-5', null],
    ['1.5', null],
    ['soon', null],
    ['', null],
    [undefined, null],
  ])('%p is %p ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it('reads the first of repeated headers', () => {
    expect(parseRetryAfter(['7', '9'], now)).toBe(7_000);
  });
});

describe('answers', () => {
  it.each([
    [200, 'success'],
    [204, 'success'],
    [299, 'success'],
    [301, 'failure'],
    [302, 'failure'],
    [307, 'failure'],
    [400, 'failure'],
    [404, 'failure'],
    [410, 'gone'],
    [429, 'failure'],
    [500, 'failure'],
    [503, 'failure'],
  ])('%p is %p', (status, outcome) => {
    expect(classifyStatus(status)).toBe(outcome);
  });
});
