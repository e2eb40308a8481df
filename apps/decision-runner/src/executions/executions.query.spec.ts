import { ServiceError } from '@ds/contracts';
import { decodeCursor, encodeCursor, pageWithin } from './executions.query';

const item = (size: number, id = size) => ({ id, body: { text: 'x'.repeat(size) } });
const bytes = (size: number) => JSON.stringify({ text: 'x'.repeat(size) }).length;

describe('pageWithin', () => {
  it('keeps every item while their JSON fits, and says nothing is left', () => {
    const items = [item(10), item(20), item(30)];
    expect(pageWithin(items, 1_000)).toEqual({ page: items, hasMore: false });
  });

  it('stops before the item that would pass the budget, counting the commas between items', () => {
    const items = [item(100, 1), item(100, 2), item(100, 3)];
    const twoItems = bytes(100) * 2 + 1;
    expect(pageWithin(items, twoItems)).toEqual({ page: items.slice(0, 2), hasMore: true });
    expect(pageWithin(items, twoItems - 1)).toEqual({ page: items.slice(0, 1), hasMore: true });
  });

  it('always keeps the first item, however large, so that paging moves on', () => {
    const items = [item(5_000, 1), item(1, 2)];
    expect(pageWithin(items, 100)).toEqual({ page: items.slice(0, 1), hasMore: true });
    expect(pageWithin([item(5_000)], 100)).toEqual({ page: [item(5_000)], hasMore: false });
  });

  it('counts bytes, not characters', () => {
    const wide = [{ body: 'é'.repeat(50) }, { body: 'é'.repeat(50) }];
    expect(pageWithin(wide, 2 * 52 + 1).page).toHaveLength(1);
    expect(pageWithin(wide, 2 * (100 + 2) + 1).page).toHaveLength(2);
  });

  it('answers an empty page for no items', () => {
    expect(pageWithin([], 10)).toEqual({ page: [], hasMore: false });
  });
});

describe('execution cursors', () => {
  const forged = (text: string) => Buffer.from(text).toString('base64url');

  it('round-trips a sequence up to bigint', () => {
    expect(decodeCursor(encodeCursor('42'))).toBe('42');
    expect(decodeCursor(encodeCursor('9223372036854775807'))).toBe('9223372036854775807');
  });

  it.each(['e:9223372036854775808', 'e:9999999999999999999', 'e:-1', 'e:', 'x:1', 'e:1.5'])('refuses %s as an invalid cursor', (text) => {
    expect(() => decodeCursor(forged(text))).toThrow(ServiceError);
    try {
      decodeCursor(forged(text));
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_REQUEST', status: 400, details: [{ path: 'cursor' }] });
    }
  });
});
