import { SlidingWindow } from './workspace-window';

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
