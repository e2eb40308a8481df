import { LocalSemaphores, QUEUE_FULL, SlotLease } from './local-semaphore';

describe('slots counted in this process', () => {
  it('grants up to the limit, then makes callers wait until a slot is released, first come first served', async () => {
    const slots = new LocalSemaphores();
    const deadline = Date.now() + 5_000;
    const a = await slots.acquire('k', 2, deadline);
    const b = await slots.acquire('k', 2, deadline);
    expect(a && b).toBeTruthy();
    expect(slots.held('k')).toBe(2);
    const order: string[] = [];
    const c = slots.acquire('k', 2, deadline).then((lease) => (order.push('c'), lease));
    const d = slots.acquire('k', 2, deadline).then((lease) => (order.push('d'), lease));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    a!.release();
    a!.release(); // a second release must not free a second slot
    const leaseC = await c;
    expect(order).toEqual(['c']);
    expect(slots.held('k')).toBe(2);
    b!.release();
    const leaseD = await d;
    expect(order).toEqual(['c', 'd']);
    leaseC!.release();
    leaseD!.release();
    expect(slots.held('k')).toBe(0);
  });

  it('answers null when no slot frees before the deadline, and forgets the waiter', async () => {
    const slots = new LocalSemaphores();
    const held = await slots.acquire('k', 1, Date.now() + 1_000);
    const started = Date.now();
    expect(await slots.acquire('k', 1, Date.now() + 80)).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
    expect(await slots.acquire('k', 1, Date.now() - 1)).toBeNull();
    held!.release();
    expect(slots.held('k')).toBe(0);
    expect(await slots.acquire('k', 1, Date.now() + 10)).not.toBeNull();
  });

  it('refuses at once when as many callers as allowed already wait, and queues again once one is served', async () => {
    const slots = new LocalSemaphores();
    const deadline = Date.now() + 5_000;
    const held = await slots.acquire('k', 1, deadline, 1);
    expect(held).not.toBe(QUEUE_FULL);
    const waiting = slots.acquire('k', 1, deadline, 1);
    expect(await slots.acquire('k', 1, deadline, 1)).toBe(QUEUE_FULL);
    (held as SlotLease).release();
    const next = await waiting;
    expect(next).not.toBeNull();
    expect(next).not.toBe(QUEUE_FULL);
    // The queue is empty again: the next caller waits rather than being refused.
    const again = slots.acquire('k', 1, Date.now() + 30, 1);
    expect(await again).toBeNull();
    (next as SlotLease).release();
    expect(slots.held('k')).toBe(0);
  });

  it('counts every credential on its own', async () => {
    const slots = new LocalSemaphores();
    expect(await slots.acquire('a', 1, Date.now() + 10)).not.toBeNull();
    expect(await slots.acquire('b', 1, Date.now() + 10)).not.toBeNull();
    expect(await slots.acquire('a', 1, Date.now() + 10)).toBeNull();
  });
});
