import { windowDecision, workspaceWindowKey } from './window';

describe('the shared delivery window', () => {
  it('keys each workspace apart under the delivery namespace', () => {
    expect(workspaceWindowKey('ws_abc')).toBe('ds:delivery:window:ws_abc');
    expect(workspaceWindowKey('ws_abc')).not.toBe(workspaceWindowKey('ws_abd'));
  });

  it('reads a counted attempt with the moment Redis counted it', () => {
    expect(windowDecision([1, 1_750_000_000_123])).toEqual({ counted: true, at: 1_750_000_000_123 });
  });

  it('reads a full window with the wait until its oldest start leaves', () => {
    expect(windowDecision([0, 1_750_000_000_123, 59_970])).toEqual({ counted: false, at: 1_750_000_000_123, waitMs: 59_970 });
  });

  it('never answers a wait shorter than a millisecond', () => {
    expect(windowDecision([0, 5, 0])).toEqual({ counted: false, at: 5, waitMs: 1 });
    expect(windowDecision([0, 5, -3])).toEqual({ counted: false, at: 5, waitMs: 1 });
  });

  it.each([
    ['nothing', null],
    ['a number', 1],
    ['an empty reply', []],
    ['a count without its time', [1]],
    ['a full window without its wait', [0, 5]],
    ['a counted attempt with a wait', [1, 5, 10]],
    ['an unknown verdict', [2, 5]],
    ['a negative time', [1, -1]],
    ['strings', ['1', '5']],
    ['fractions', [1, 5.5]],
  ])('refuses %s', (_, reply) => {
    expect(windowDecision(reply)).toBeNull();
  });
});
