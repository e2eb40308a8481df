import { Counter, Registry } from 'prom-client';
import { createLogger } from '@ds/platform';
import { DeliveryWindows } from './delivery-windows';

describe('delivery windows without Redis', () => {
  it('count in the replica’s own window, and no take counts as a fallback', async () => {
    const fallbacks = new Counter({ name: 'fallbacks_total', help: 'fallbacks', registers: [new Registry()] });
    const windows = new DeliveryWindows(null, fallbacks, createLogger('delivery', 'silent'), 2, 60_000);
    await windows.connect();
    const window = windows.forWorkspace('ws_a');
    const before = Date.now();
    const first = await window.take();
    expect(first).toEqual({ startedAt: expect.any(Number) });
    expect((first as { startedAt: number }).startedAt).toBeGreaterThanOrEqual(before);
    expect(await window.take()).toHaveProperty('startedAt');
    const full = await window.take();
    expect(full).toEqual({ waitMs: expect.any(Number) });
    expect((full as { waitMs: number }).waitMs).toBeGreaterThan(59_000);
    expect(window.waitAt(Date.now())).toBeGreaterThan(59_000);
    expect(window.idle(Date.now())).toBe(false);
    expect(await windows.forWorkspace('ws_b').take()).toHaveProperty('startedAt');
    expect((await fallbacks.get()).values[0]?.value ?? 0).toBe(0);
    await windows.close();
  });
});
