import { DAY_MS, reportTerms } from './ranges';

const at = (iso: string) => new Date(iso);
const terms = (from: string | null, to: string | null) =>
  reportTerms(from === null ? null : at(from), to === null ? null : at(to)).map((t) => [
    t.read,
    t.from?.toISOString() ?? null,
    t.to?.toISOString() ?? null,
    t.sign,
  ]);

describe('reportTerms', () => {
  it('reads every day from the rollup without a range, and whole days for a range of dates', () => {
    expect(terms(null, null)).toEqual([['days', null, null, 1]]);
    expect(terms('2026-05-01', '2026-05-08')).toEqual([['days', '2026-05-01T00:00:00.000Z', '2026-05-08T00:00:00.000Z', 1]]);
    expect(terms('2026-05-01', null)).toEqual([['days', '2026-05-01T00:00:00.000Z', null, 1]]);
    expect(terms(null, '2026-05-08')).toEqual([['days', null, '2026-05-08T00:00:00.000Z', 1]]);
  });

  it('reads a short partial day at either end from its labels', () => {
    expect(terms('2026-05-01T20:00:00Z', '2026-05-08T03:00:00Z')).toEqual([
      ['labels', '2026-05-01T20:00:00.000Z', '2026-05-02T00:00:00.000Z', 1],
      ['days', '2026-05-02T00:00:00.000Z', '2026-05-08T00:00:00.000Z', 1],
      ['labels', '2026-05-08T00:00:00.000Z', '2026-05-08T03:00:00.000Z', 1],
    ]);
  });

  it('reads a long partial day as its rollup minus the labels of the rest of the day', () => {
    expect(terms('2026-05-01T02:00:00Z', '2026-05-08T21:00:00Z')).toEqual([
      ['days', '2026-05-01T00:00:00.000Z', '2026-05-02T00:00:00.000Z', 1],
      ['labels', '2026-05-01T00:00:00.000Z', '2026-05-01T02:00:00.000Z', -1],
      ['days', '2026-05-02T00:00:00.000Z', '2026-05-08T00:00:00.000Z', 1],
      ['days', '2026-05-08T00:00:00.000Z', '2026-05-09T00:00:00.000Z', 1],
      ['labels', '2026-05-08T21:00:00.000Z', '2026-05-09T00:00:00.000Z', -1],
    ]);
  });

  it('handles a range within one day, and adjacent partial days without a whole day between them', () => {
    expect(terms('2026-05-01T01:00:00Z', '2026-05-01T05:00:00Z')).toEqual([['labels', '2026-05-01T01:00:00.000Z', '2026-05-01T05:00:00.000Z', 1]]);
    expect(terms('2026-05-01T01:00:00Z', '2026-05-01T23:00:00Z')).toEqual([
      ['days', '2026-05-01T00:00:00.000Z', '2026-05-02T00:00:00.000Z', 1],
      ['labels', '2026-05-01T00:00:00.000Z', '2026-05-01T01:00:00.000Z', -1],
      ['labels', '2026-05-01T23:00:00.000Z', '2026-05-02T00:00:00.000Z', -1],
    ]);
    expect(terms('2026-05-01T00:00:00Z', '2026-05-01T05:00:00Z')).toEqual([['labels', '2026-05-01T00:00:00.000Z', '2026-05-01T05:00:00.000Z', 1]]);
    expect(terms('2026-05-01T22:00:00Z', '2026-05-02T03:00:00Z')).toEqual([
      ['labels', '2026-05-01T22:00:00.000Z', '2026-05-02T00:00:00.000Z', 1],
      ['labels', '2026-05-02T00:00:00.000Z', '2026-05-02T03:00:00.000Z', 1],
    ]);
    expect(terms('2026-05-01T12:00:00Z', '2026-05-02T00:00:00Z')).toEqual([['labels', '2026-05-01T12:00:00.000Z', '2026-05-02T00:00:00.000Z', 1]]);
  });

  it('answers nothing for an empty or reversed range', () => {
    expect(terms('2026-05-02', '2026-05-02')).toEqual([]);
    expect(terms('2026-05-03', '2026-05-02')).toEqual([]);
  });

  it('covers every instant of the range exactly once, counting subtractions', () => {
    // Random ranges against a grid of instants: the signed terms containing each instant must sum to 1 inside, 0 outside.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const base = Date.UTC(2026, 4, 1);
    const wrong: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      const from = i % 10 === 0 ? null : base + Math.floor(random() * 5 * DAY_MS);
      const to = i % 7 === 0 ? null : base + Math.floor(random() * 5 * DAY_MS);
      const list = reportTerms(from === null ? null : new Date(from), to === null ? null : new Date(to));
      for (let t = base - DAY_MS; t < base + 6 * DAY_MS; t += 3_600_000 / 4 + 1) {
        const inside = (from === null || t >= from) && (to === null || t < to) ? 1 : 0;
        const counted = list
          .filter((term) => (term.from === null || t >= term.from.getTime()) && (term.to === null || t < term.to.getTime()))
          .reduce((total, term) => total + term.sign, 0);
        if (counted !== inside) wrong.push({ from, to, t, counted });
      }
      const labelled = list.filter((term) => term.read === 'labels').reduce((total, term) => total + term.to!.getTime() - term.from!.getTime(), 0);
      if (labelled > DAY_MS) wrong.push({ from, to, labelled });
    }
    expect(wrong).toEqual([]);
  });
});
