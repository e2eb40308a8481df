import { currentPeriod } from './accounts.service';

describe('currentPeriod', () => {
  const at = (iso: string) => new Date(iso);

  it('starts at the anchor in the anchor month', () => {
    expect(currentPeriod(at('2026-01-15T10:00:00Z'), at('2026-01-20T00:00:00Z'))).toEqual({ start: at('2026-01-15T10:00:00Z'), end: at('2026-02-15T10:00:00Z') });
  });

  it('stays in the previous period before the anchor day', () => {
    expect(currentPeriod(at('2026-01-15T10:00:00Z'), at('2026-03-15T09:59:59Z'))).toEqual({ start: at('2026-02-15T10:00:00Z'), end: at('2026-03-15T10:00:00Z') });
  });

  it('clamps anchors on the 31st to short months', () => {
    expect(currentPeriod(at('2026-01-31T00:00:00Z'), at('2026-02-28T12:00:00Z'))).toEqual({ start: at('2026-02-28T00:00:00Z'), end: at('2026-03-31T00:00:00Z') });
  });
});
