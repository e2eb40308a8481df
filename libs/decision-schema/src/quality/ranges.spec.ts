import { DAY_MS, HOUR_MS, reportTerms } from './ranges';

const at = (iso: string) => new Date(iso);
const terms = (from: string | null, to: string | null) =>
  reportTerms(from === null ? null : at(from), to === null ? null : at(to)).map((t) => [
    t.read,
    t.from?.toISOString().replace(':00.000Z', '') ?? null,
    t.to?.toISOString().replace(':00.000Z', '') ?? null,
    t.sign,
  ]);

describe('reportTerms', () => {
  it('reads every day from the rollup without a range, and whole days for a range of dates', () => {
    expect(terms(null, null)).toEqual([['days', null, null, 1]]);
    expect(terms('2026-05-01', '2026-05-08')).toEqual([['days', '2026-05-01T00:00', '2026-05-08T00:00', 1]]);
    expect(terms('2026-05-01', null)).toEqual([['days', '2026-05-01T00:00', null, 1]]);
    expect(terms(null, '2026-05-08')).toEqual([['days', null, '2026-05-08T00:00', 1]]);
  });

  it('reads the whole hours of a partial first or last day from the hour rollup', () => {
    expect(terms('2026-05-01T20:00:00Z', '2026-05-08T03:00:00Z')).toEqual([
      ['hours', '2026-05-01T20:00', '2026-05-02T00:00', 1],
      ['days', '2026-05-02T00:00', '2026-05-08T00:00', 1],
      ['hours', '2026-05-08T00:00', '2026-05-08T03:00', 1],
    ]);
  });

  it('reads a short partial hour from its labels, a long one as its hour minus the rest of the hour', () => {
    expect(terms('2026-05-01T20:50:00Z', '2026-05-08T03:10:00Z')).toEqual([
      ['labels', '2026-05-01T20:50', '2026-05-01T21:00', 1],
      ['hours', '2026-05-01T21:00', '2026-05-02T00:00', 1],
      ['days', '2026-05-02T00:00', '2026-05-08T00:00', 1],
      ['hours', '2026-05-08T00:00', '2026-05-08T03:00', 1],
      ['labels', '2026-05-08T03:00', '2026-05-08T03:10', 1],
    ]);
    expect(terms('2026-05-01T20:10:00Z', '2026-05-02T03:50:00Z')).toEqual([
      ['hours', '2026-05-01T20:00', '2026-05-01T21:00', 1],
      ['labels', '2026-05-01T20:00', '2026-05-01T20:10', -1],
      ['hours', '2026-05-01T21:00', '2026-05-02T00:00', 1],
      ['hours', '2026-05-02T00:00', '2026-05-02T03:00', 1],
      ['hours', '2026-05-02T03:00', '2026-05-02T04:00', 1],
      ['labels', '2026-05-02T03:50', '2026-05-02T04:00', -1],
    ]);
  });

  it('handles a range within one day and within one hour', () => {
    expect(terms('2026-05-01T01:00:00Z', '2026-05-01T05:00:00Z')).toEqual([['hours', '2026-05-01T01:00', '2026-05-01T05:00', 1]]);
    expect(terms('2026-05-01T01:10:00Z', '2026-05-01T01:20:00Z')).toEqual([['labels', '2026-05-01T01:10', '2026-05-01T01:20', 1]]);
    expect(terms('2026-05-01T01:05:00Z', '2026-05-01T01:55:00Z')).toEqual([
      ['hours', '2026-05-01T01:00', '2026-05-01T02:00', 1],
      ['labels', '2026-05-01T01:00', '2026-05-01T01:05', -1],
      ['labels', '2026-05-01T01:55', '2026-05-01T02:00', -1],
    ]);
  });

  it('answers nothing for an empty or reversed range', () => {
    expect(terms('2026-05-02', '2026-05-02')).toEqual([]);
    expect(terms('2026-05-03', '2026-05-02')).toEqual([]);
  });

  it('covers every instant of the range exactly once, counting subtractions, reading at most an hour of labels', () => {
    // Random ranges against a grid of instants: the signed terms containing an instant sum to 1 inside, 0 outside.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const base = Date.UTC(2026, 4, 1);
    const wrong: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      const from = i % 10 === 0 ? null : base + Math.floor(random() * (i % 3 === 0 ? 3 * HOUR_MS : 5 * DAY_MS));
      const to = i % 7 === 0 ? null : base + Math.floor(random() * (i % 3 === 0 ? 3 * HOUR_MS : 5 * DAY_MS));
      const list = reportTerms(from === null ? null : new Date(from), to === null ? null : new Date(to));
      for (let t = base - DAY_MS; t < base + 6 * DAY_MS; t += 60_000 * 7 + 1) {
        const inside = (from === null || t >= from) && (to === null || t < to) ? 1 : 0;
        const counted = list
          .filter((term) => (term.from === null || t >= term.from.getTime()) && (term.to === null || t < term.to.getTime()))
          .reduce((total, term) => total + term.sign, 0);
        if (counted !== inside) wrong.push({ from, to, t, counted });
      }
      const labelled = list.filter((term) => term.read === 'labels').reduce((total, term) => total + term.to!.getTime() - term.from!.getTime(), 0);
      if (labelled > HOUR_MS) wrong.push({ from, to, labelled });
    }
    expect(wrong).toEqual([]);
  });
});
