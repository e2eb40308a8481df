import { charLength, formatNumber, measuredLength, serialize } from './json';

describe('charLength', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['ação', 4],
    ['😀', 1],
    ['a😀b', 3],
    ['\ud83d', 1], // a lone surrogate still counts as one
    ['\ude00\ud83d', 2],
  ])('%p has %i characters', (value, length) => {
    expect(charLength(value)).toBe(length);
  });
});

describe('measuredLength', () => {
  it('counts text as itself and JSON by its serialized form', () => {
    expect(measuredLength('ab"c')).toBe(4);
    expect(measuredLength({ a: 'ab"c' })).toBe('{"a":"ab\\"c"}'.length);
    expect(measuredLength([1, 2])).toBe(5);
  });

  it('is undefined for what JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(measuredLength(cyclic)).toBeUndefined();
    expect(measuredLength({ big: BigInt(1) })).toBeUndefined();
    expect(serialize(undefined)).toBeUndefined();
  });
});

describe('formatNumber', () => {
  it.each([
    [32000, '32,000'],
    [0.3, '0.3'],
    [-100, '-100'],
    [1e-7, '0.0000001'],
  ])('%p → %p', (value, text) => {
    expect(formatNumber(value)).toBe(text);
  });
});
