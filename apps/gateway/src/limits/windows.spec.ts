import { allowed, rateLimitHeaders, retryAfterSeconds } from './windows';

describe('rate-limit windows', () => {
  it('allows up to the limit and not one more', () => {
    expect(allowed({ window: 'reads', limit: 60, hits: 60, resetAt: 0 })).toBe(true);
    expect(allowed({ window: 'reads', limit: 60, hits: 61, resetAt: 0 })).toBe(false);
  });

  it('describes the window in both header families', () => {
    const headers = rateLimitHeaders({ window: 'decisions', limit: 60, hits: 3, resetAt: 1_000_042 }, 1_000_000);
    expect(headers).toEqual({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '57',
      'x-ratelimit-reset': '1000042',
      'ratelimit-policy': '"decisions";q=60;w=60, "reads";q=60;w=60, "webhooks";q=60;w=60',
      ratelimit: '"decisions";r=57;t=42',
    });
  });

  it('never reports negative room, and asks to wait at least a second', () => {
    const state = { window: 'reads' as const, limit: 60, hits: 75, resetAt: 100 };
    expect(rateLimitHeaders(state, 100)['x-ratelimit-remaining']).toBe('0');
    expect(retryAfterSeconds(state, 100)).toBe(1);
    expect(retryAfterSeconds(state, 58)).toBe(42);
  });
});
