import { Pace, paceTurn, Pacer } from './pacing';

const pace: Pace = { perSecond: 10, burst: 3, maxWaitMs: 1_000 };

describe('paceTurn', () => {
  it('admits a key never seen at once', () => {
    expect(paceTurn(pace, undefined, 5_000)).toEqual({ kind: 'go', waitMs: 0, tat: 5_100 });
  });

  it('admits the whole burst at once, then holds each further request one interval after the last', () => {
    let tat: number | undefined;
    const waits: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const turn = paceTurn(pace, tat, 0);
      if (turn.kind !== 'go') throw new Error('refused inside the wait bound');
      waits.push(turn.waitMs);
      tat = turn.tat;
    }
    expect(waits).toEqual([0, 0, 0, 100, 200, 300]);
  });

  it('refuses a request that would wait longer than the bound, telling when one would be held again', () => {
    // Arrival time 1.5 s ahead with a burst tolerance of 0.2 s: the next request would wait 1.3 s.
    expect(paceTurn(pace, 1_500, 0)).toEqual({ kind: 'refused', retryAfterMs: 300 });
  });

  it('holds a request that waits exactly the bound', () => {
    expect(paceTurn(pace, 1_200, 0)).toEqual({ kind: 'go', waitMs: 1_000, tat: 1_300 });
  });

  it('refills: a key quiet for the burst’s length is admitted at once again', () => {
    expect(paceTurn(pace, 1_000, 1_000)).toEqual({ kind: 'go', waitMs: 0, tat: 1_100 });
    expect(paceTurn(pace, 1_000, 800)).toEqual({ kind: 'go', waitMs: 0, tat: 1_100 });
    expect(paceTurn(pace, 1_000, 799)).toEqual({ kind: 'go', waitMs: 1, tat: 1_100 });
  });

  it('a burst of one is a plain rate', () => {
    const steady: Pace = { perSecond: 4, burst: 1, maxWaitMs: 10_000 };
    expect(paceTurn(steady, undefined, 0)).toEqual({ kind: 'go', waitMs: 0, tat: 250 });
    expect(paceTurn(steady, 250, 0)).toEqual({ kind: 'go', waitMs: 250, tat: 500 });
  });
});

describe('Pacer', () => {
  it('keeps each key’s pace apart, and a refusal costs the key nothing', () => {
    let now = 0;
    const pacer = new Pacer({ perSecond: 1, burst: 1, maxWaitMs: 0 }, 10, () => now);
    expect(pacer.take('a')).toEqual({ kind: 'go', waitMs: 0, tat: 1_000 });
    expect(pacer.take('b')).toEqual({ kind: 'go', waitMs: 0, tat: 1_000 });
    expect(pacer.take('a')).toEqual({ kind: 'refused', retryAfterMs: 1_000 });
    expect(pacer.take('a')).toEqual({ kind: 'refused', retryAfterMs: 1_000 });
    now = 1_000;
    expect(pacer.take('a')).toEqual({ kind: 'go', waitMs: 0, tat: 2_000 });
  });

  it('holds at most the number of keys it is given, the least recent forgotten first', () => {
    const now = 0;
    const pacer = new Pacer({ perSecond: 1, burst: 1, maxWaitMs: 0 }, 2, () => now);
    pacer.take('a');
    pacer.take('b');
    pacer.take('c');
    // 'a' was forgotten, so it starts afresh; 'c' is still paced.
    expect(pacer.take('a').kind).toBe('go');
    expect(pacer.take('c').kind).toBe('refused');
  });
});
