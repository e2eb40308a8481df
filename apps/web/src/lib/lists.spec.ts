import { dropIndex, dropPlacement, freshKey, moveItem, removeItem, renameKey } from './lists';

describe('lists and maps', () => {
  it('moves an item up or down and leaves out-of-range moves alone', () => {
    expect(moveItem(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moveItem(['a', 'b', 'c'], 0, 1)).toEqual(['b', 'a', 'c']);
    expect(moveItem(['a', 'b'], 0, 2)).toEqual(['a', 'b']);
    expect(moveItem(['a', 'b'], -1, 0)).toEqual(['a', 'b']);
    const list = ['a'];
    expect(moveItem(list, 0, 0)).not.toBe(list);
  });

  it('places a dragged item beside the item under the pointer, or the nearest one', () => {
    // Three items 100 px tall with 20 px gaps.
    const rects = [0, 120, 240].map((top) => ({ top, bottom: top + 100 }));
    expect(dropPlacement(rects, 10)).toEqual({ over: 0, before: true });
    expect(dropPlacement(rects, 90)).toEqual({ over: 0, before: false });
    expect(dropPlacement(rects, 150)).toEqual({ over: 1, before: true });
    expect(dropPlacement(rects, 190)).toEqual({ over: 1, before: false });
    // In a gap the nearer edge wins; above the first or below the last, the end of the list.
    expect(dropPlacement(rects, 105)).toEqual({ over: 0, before: false });
    expect(dropPlacement(rects, 118)).toEqual({ over: 1, before: true });
    expect(dropPlacement(rects, -500)).toEqual({ over: 0, before: true });
    expect(dropPlacement(rects, 900)).toEqual({ over: 2, before: false });
    expect(dropPlacement([], 10)).toBeUndefined();
  });

  it('turns a placement into the index moveItem takes', () => {
    // The third of three dropped above the first becomes the first; below the first, the second.
    expect(dropIndex(2, { over: 0, before: true })).toBe(0);
    expect(dropIndex(2, { over: 0, before: false })).toBe(1);
    // The first dropped below the last becomes the last; just below itself or above the next, it stays.
    expect(dropIndex(0, { over: 2, before: false })).toBe(2);
    expect(dropIndex(0, { over: 0, before: false })).toBe(0);
    expect(dropIndex(0, { over: 1, before: true })).toBe(0);
    expect(dropIndex(1, { over: 1, before: true })).toBe(1);
    expect(moveItem(['a', 'b', 'c'], 0, dropIndex(0, { over: 2, before: true }))).toEqual(['b', 'a', 'c']);
  });

  it('removes one item', () => {
    expect(removeItem(['a', 'b', 'c'], 1)).toEqual(['a', 'c']);
    expect(removeItem(['a'], 3)).toEqual(['a']);
  });

  it('renames a key in place', () => {
    expect(Object.keys(renameKey({ a: 1, b: 2, c: 3 }, 'b', 'z'))).toEqual(['a', 'z', 'c']);
    expect(renameKey({ a: 1 }, 'a', 'b')).toEqual({ b: 1 });
    expect(renameKey({ a: 1, b: 2 }, 'a', 'b')).toEqual({ a: 1, b: 2 });
    expect(renameKey({ a: 1, '': 2 }, 'a', '')).toEqual({ a: 1, '': 2 });
  });

  it('finds a fresh key', () => {
    expect(freshKey('rule', [])).toBe('rule_1');
    expect(freshKey('rule', ['rule_1', 'rule_3'])).toBe('rule_2');
  });
});
