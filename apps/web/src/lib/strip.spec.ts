import { hiddenEdges, revealOffset } from './strip';

describe('a strip that scrolls sideways', () => {
  it('has nothing hidden when it fits, give or take rounding', () => {
    expect(hiddenEdges({ scrollLeft: 0, clientWidth: 360, scrollWidth: 360 })).toEqual({ start: false, end: false });
    expect(hiddenEdges({ scrollLeft: 0, clientWidth: 360, scrollWidth: 360.4 })).toEqual({ start: false, end: false });
  });

  it('says which edges have more behind them', () => {
    expect(hiddenEdges({ scrollLeft: 0, clientWidth: 360, scrollWidth: 900 })).toEqual({ start: false, end: true });
    expect(hiddenEdges({ scrollLeft: 200, clientWidth: 360, scrollWidth: 900 })).toEqual({ start: true, end: true });
    expect(hiddenEdges({ scrollLeft: 540, clientWidth: 360, scrollWidth: 900 })).toEqual({ start: true, end: false });
    expect(hiddenEdges({ scrollLeft: 539.7, clientWidth: 360, scrollWidth: 900 })).toEqual({ start: true, end: false });
  });

  it('leaves an item that is already in view where it is', () => {
    expect(revealOffset({ scrollLeft: 100, clientWidth: 360, scrollWidth: 900 }, { start: 150, width: 80 }, 24)).toBe(100);
  });

  it('brings an item past the end in, its start just after the start fade', () => {
    expect(revealOffset({ scrollLeft: 0, clientWidth: 360, scrollWidth: 900 }, { start: 400, width: 80 }, 24)).toBe(376);
    // Half under the end fade counts as out of view.
    expect(revealOffset({ scrollLeft: 0, clientWidth: 360, scrollWidth: 900 }, { start: 300, width: 50 }, 24)).toBe(276);
  });

  it('brings an item before the start back, and never scrolls past either end', () => {
    expect(revealOffset({ scrollLeft: 300, clientWidth: 360, scrollWidth: 900 }, { start: 100, width: 80 }, 24)).toBe(76);
    expect(revealOffset({ scrollLeft: 300, clientWidth: 360, scrollWidth: 900 }, { start: 10, width: 80 }, 24)).toBe(0);
    expect(revealOffset({ scrollLeft: 0, clientWidth: 360, scrollWidth: 900 }, { start: 820, width: 80 }, 24)).toBe(540);
  });
});
