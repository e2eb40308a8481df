import { formatTimeAgo } from './relative-time';

describe('how long ago, in words', () => {
  const now = new Date('2026-11-28T09:00:00Z');

  it('uses the largest whole unit', () => {
    expect(formatTimeAgo('2026-11-28T08:57:00Z', now, 'en')).toBe('3 minutes ago');
    expect(formatTimeAgo('2026-11-28T08:58:59Z', now, 'en')).toBe('1 minute ago');
    expect(formatTimeAgo('2026-11-28T06:30:00Z', now, 'en')).toBe('2 hours ago');
    expect(formatTimeAgo('2026-11-27T08:00:00Z', now, 'en')).toBe('yesterday');
    expect(formatTimeAgo('2026-09-01T09:00:00Z', now, 'en')).toBe('2 months ago');
    expect(formatTimeAgo('2024-11-01T09:00:00Z', now, 'en')).toBe('2 years ago');
  });

  it('reads under a minute, and a clock slightly behind the server, as now', () => {
    expect(formatTimeAgo('2026-11-28T08:59:30Z', now, 'en')).toBe('now');
    expect(formatTimeAgo('2026-11-28T09:00:05Z', now, 'en')).toBe('now');
  });

  it('speaks the reader’s language', () => {
    expect(formatTimeAgo('2026-11-28T08:57:00Z', now, 'pt')).toBe('há 3 minutos');
  });

  it('answers null for no time or an unreadable one', () => {
    expect(formatTimeAgo(null, now, 'en')).toBeNull();
    expect(formatTimeAgo('not a date', now, 'en')).toBeNull();
  });
});
