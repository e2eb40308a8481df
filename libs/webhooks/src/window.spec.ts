import { SlidingWindow, windowDecision, workspaceWindowKey } from './window';

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

describe('the per-workspace window', () => {
  it('holds 600 attempt starts in any 60 seconds unless given another size', () => {
    const window = new SlidingWindow();
    for (let i = 0; i < 600; i++) expect(window.take(i * 10)).toBe(0);
    expect(window.take(59_999)).toBe(1);
    expect(window.take(60_000)).toBe(0);
    expect(window.take(60_001)).toBe(9);
    expect(window.take(60_010)).toBe(0);
  });

  it('allows the limit within a minute and says how long the next one waits', () => {
    const window = new SlidingWindow(3, 60_000);
    expect([window.take(0), window.take(10), window.take(20)]).toEqual([0, 0, 0]);
    expect(window.take(30)).toBe(59_970);
    expect(window.take(60_000)).toBe(0);
    expect(window.take(60_001)).toBe(9);
    expect(window.take(60_010)).toBe(0);
  });

  it('tells the wait without counting', () => {
    const window = new SlidingWindow(1, 1_000);
    expect(window.waitAt(0)).toBe(0);
    expect(window.waitAt(0)).toBe(0);
    expect(window.take(0)).toBe(0);
    expect(window.waitAt(400)).toBe(600);
  });

  it('counts only attempts it allowed', () => {
    const window = new SlidingWindow(1, 1_000);
    expect(window.take(0)).toBe(0);
    for (let t = 1; t < 1_000; t += 100) expect(window.take(t)).toBeGreaterThan(0);
    expect(window.take(1_000)).toBe(0);
  });

  it('is idle once a window has passed with nothing counted', () => {
    const window = new SlidingWindow(600, 60_000);
    expect(window.idle(0)).toBe(true);
    window.take(0);
    expect(window.idle(59_999)).toBe(false);
    expect(window.idle(60_000)).toBe(true);
  });

  it('keeps 600 a minute over a long steady stream', () => {
    const window = new SlidingWindow(600, 60_000);
    let allowed = 0;
    for (let t = 0; t < 300_000; t += 20) if (window.take(t) === 0) allowed++;
    expect(allowed).toBe(3_000);
  });
});

describe('a window standing in for another', () => {
  it('counts the starts the other allowed, so it does not allow a fresh limit on top of them', () => {
    const window = new SlidingWindow(3, 60_000);
    window.record(0);
    window.record(10);
    expect(window.take(20)).toBe(0);
    expect(window.take(30)).toBe(59_970);
    expect(window.idle(60_019)).toBe(false);
    expect(window.idle(60_020)).toBe(true);
  });
});
