import { allowed, rateLimitHeaders, retryAfterSeconds, WINDOW_NAMES, windowLimit } from './windows';

describe('rate-limit windows', () => {
  it('allows up to the limit and not one more', () => {
    expect(allowed({ window: 'reads', planLimit: 60, limit: 60, hits: 60, resetAt: 0 })).toBe(true);
    expect(allowed({ window: 'reads', planLimit: 60, limit: 60, hits: 61, resetAt: 0 })).toBe(false);
  });

  it('gives decisions, reads and secret-URL calls the plan’s limit each, and outcomes twice it', () => {
    expect(WINDOW_NAMES.map((name) => [name, windowLimit(name, 60)])).toEqual([
      ['decisions', 60],
      ['reads', 60],
      ['webhooks', 60],
      ['outcomes', 120],
    ]);
    expect(windowLimit('outcomes', 10_000)).toBe(20_000);
  });

  it('describes the window in both header families, the policy naming every window with its own limit', () => {
    const headers = rateLimitHeaders({ window: 'decisions', planLimit: 60, limit: 60, hits: 3, resetAt: 1_000_042 }, 1_000_000);
    expect(headers).toEqual({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '57',
      'x-ratelimit-reset': '1000042',
      'ratelimit-policy': '"decisions";q=60;w=60, "reads";q=60;w=60, "webhooks";q=60;w=60, "outcomes";q=120;w=60',
      ratelimit: '"decisions";r=57;t=42',
    });
  });

  it('reports the outcomes window’s own limit and room', () => {
    const headers = rateLimitHeaders({ window: 'outcomes', planLimit: 60, limit: 120, hits: 70, resetAt: 1_000_030 }, 1_000_000);
    expect([headers['x-ratelimit-limit'], headers['x-ratelimit-remaining'], headers.ratelimit]).toEqual(['120', '50', '"outcomes";r=50;t=30']);
  });

  it('never reports negative room, and asks to wait at least a second', () => {
    const state = { window: 'reads' as const, planLimit: 60, limit: 60, hits: 75, resetAt: 100 };
    expect(rateLimitHeaders(state, 100)['x-ratelimit-remaining']).toBe('0');
    expect(retryAfterSeconds(state, 100)).toBe(1);
    expect(retryAfterSeconds(state, 58)).toBe(42);
  });
});
