import { GROUP_WINDOW_MS, HISTORY_LIMIT, record, redo, startHistory, undo } from './history';

describe('editor history', () => {
  it('undoes and redoes steps in order, and a new edit clears what could be redone', () => {
    let h = startHistory('a');
    h = record(h, 'b', null, 0);
    h = record(h, 'c', null, 10);
    h = undo(h);
    expect(h.present).toBe('b');
    h = undo(h);
    expect(h.present).toBe('a');
    expect(undo(h)).toBe(h);
    h = redo(h);
    expect(h.present).toBe('b');
    h = record(h, 'x', null, 20);
    expect(h.future).toEqual([]);
    expect(redo(h)).toBe(h);
    expect(undo(h).present).toBe('b');
  });

  it('folds quick edits of one field into one step, but not edits of another field or after a pause', () => {
    let h = startHistory('');
    h = record(h, 'h', 'name', 0);
    h = record(h, 'he', 'name', 300);
    h = record(h, 'hey', 'name', 600);
    expect(undo(h).present).toBe('');
    h = record(h, 'hey!', 'name', 600 + GROUP_WINDOW_MS);
    expect(undo(h).present).toBe('hey');
    h = record(h, 'other', 'key', 600 + GROUP_WINDOW_MS + 10);
    expect(undo(h).present).toBe('hey!');
  });

  it('keeps at most the limit of steps', () => {
    let h = startHistory(0);
    for (let i = 1; i <= HISTORY_LIMIT + 50; i++) h = record(h, i, null, i);
    expect(h.past).toHaveLength(HISTORY_LIMIT);
    expect(h.past[0]).toBe(50);
  });
});
