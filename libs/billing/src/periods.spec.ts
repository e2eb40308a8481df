import fc from 'fast-check';
import { currentPeriod } from './periods';

describe('currentPeriod', () => {
  const at = (iso: string) => new Date(iso);

  it('starts at the anchor in the anchor month', () => {
    expect(currentPeriod(at('2026-01-15T10:00:00Z'), at('2026-01-20T00:00:00Z'))).toEqual({
      start: at('2026-01-15T10:00:00Z'),
      end: at('2026-02-15T10:00:00Z'),
    });
  });

  it('stays in the previous period before the anchor day', () => {
    expect(currentPeriod(at('2026-01-15T10:00:00Z'), at('2026-03-15T09:59:59Z'))).toEqual({
      start: at('2026-02-15T10:00:00Z'),
      end: at('2026-03-15T10:00:00Z'),
    });
  });

  it('starts a new period exactly at the anchor time', () => {
    expect(currentPeriod(at('2026-01-15T10:00:00Z'), at('2026-03-15T10:00:00Z')).start).toEqual(at('2026-03-15T10:00:00Z'));
  });

  it('clamps anchors on the 31st to short months', () => {
    expect(currentPeriod(at('2026-01-31T00:00:00Z'), at('2026-02-28T12:00:00Z'))).toEqual({
      start: at('2026-02-28T00:00:00Z'),
      end: at('2026-03-31T00:00:00Z'),
    });
    expect(currentPeriod(at('2024-01-31T00:00:00Z'), at('2024-02-29T12:00:00Z')).start).toEqual(at('2024-02-29T00:00:00Z'));
  });

  it('crosses years', () => {
    expect(currentPeriod(at('2025-11-30T00:00:00Z'), at('2026-01-05T00:00:00Z'))).toEqual({
      start: at('2025-12-30T00:00:00Z'),
      end: at('2026-01-30T00:00:00Z'),
    });
  });

  it('always contains now, and periods follow each other without gaps', () => {
    const date = (min: string, max: string) => fc.date({ min: new Date(min), max: new Date(max), noInvalidDate: true });
    fc.assert(
      fc.property(date('2000-01-01', '2030-01-01'), fc.integer({ min: 0, max: 40 * 366 * 86_400_000 }), (anchor, later) => {
        const now = new Date(anchor.getTime() + later);
        const period = currentPeriod(anchor, now);
        const next = currentPeriod(anchor, period.end);
        return period.start <= now && now < period.end && next.start.getTime() === period.end.getTime();
      }),
    );
  });

  it('puts a moment just before the anchor in the first period, not the month before', () => {
    const anchor = new Date('2026-11-22T06:03:27.436Z');
    expect(currentPeriod(anchor, new Date('2026-11-22T06:03:27.417Z'))).toEqual({ start: anchor, end: new Date('2026-12-22T06:03:27.436Z') });
  });
});
