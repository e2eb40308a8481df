import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LabGate, LabPool } from './lab-pool';
import type { LabTask } from './lab-tasks';

/**
 * The pool with real threads. Its thread entry is a small script written here, which speaks the pool's protocol:
 * `busyMs` keeps the thread busy, `fail` answers an error, `exit` ends the thread mid-task.
 */
const dir = mkdtempSync(join(tmpdir(), 'lab-pool-'));
const ENTRY = join(dir, 'entry.js');
writeFileSync(
  ENTRY,
  `const { parentPort, threadId } = require('node:worker_threads');
   parentPort.on('message', (task) => {
     if (task.exit) process.exit(3);
     if (task.fail) return parentPort.postMessage({ ok: false, message: 'no such thing' });
     const until = Date.now() + (task.busyMs || 0);
     while (Date.now() < until) {}
     parentPort.postMessage({ ok: true, result: { threadId, n: task.n } });
   });`,
);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Probe = { n?: number; busyMs?: number; fail?: boolean; exit?: boolean };
const task = (probe: Probe) => probe as unknown as LabTask;
const run = (pool: LabPool, probe: Probe) => pool.run(task(probe)) as unknown as Promise<{ threadId: number; n: number }>;

describe('LabPool', () => {
  it('runs at most `size` tasks at once on as many threads, the rest waiting in order', async () => {
    const pool = new LabPool(2, ENTRY);
    try {
      const replies = [1, 2, 3, 4, 5].map((n) => run(pool, { n, busyMs: 50 }));
      expect(pool.load).toEqual({ running: 2, waiting: 3 });
      const answered = await Promise.all(replies);
      expect(answered.map((reply) => reply.n)).toEqual([1, 2, 3, 4, 5]);
      expect(new Set(answered.map((reply) => reply.threadId)).size).toBe(2);
      expect(pool.load).toEqual({ running: 0, waiting: 0 });
    } finally {
      await pool.close();
    }
  });

  it('fails the task of a thread that errs or dies, and serves the next on a new thread', async () => {
    const pool = new LabPool(1, ENTRY);
    try {
      await expect(run(pool, { fail: true })).rejects.toThrow('lab task undefined failed: no such thing');
      const before = await run(pool, { n: 1 });
      await expect(run(pool, { exit: true })).rejects.toThrow('a lab thread exited with code 3');
      const after = await run(pool, { n: 2 });
      expect(after.n).toBe(2);
      expect(after.threadId).not.toBe(before.threadId);
    } finally {
      await pool.close();
    }
  });

  it('refuses waiting and new tasks once closed', async () => {
    const pool = new LabPool(1, ENTRY);
    const running = run(pool, { busyMs: 100 }).catch((error: Error) => error);
    const waiting = run(pool, { n: 2 }).catch((error: Error) => error);
    await pool.close();
    expect(await waiting).toEqual(new Error('the lab pool is closed'));
    // The thread it ran on is terminated: the task fails rather than hanging.
    expect(await running).toBeInstanceOf(Error);
    await expect(run(pool, { n: 3 })).rejects.toThrow('the lab pool is closed');
  });
});

describe('LabGate', () => {
  it('lets at most `size` pieces of work run at once and hands each freed slot to the next in line', async () => {
    const gate = new LabGate(2);
    let active = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) =>
        gate.run(async () => {
          active++;
          most = Math.max(most, active);
          await new Promise((resolve) => setTimeout(resolve, 10));
          order.push(n);
          active--;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(order.sort()).toEqual([1, 2, 3, 4, 5, 6]);
    // A failing piece of work frees its slot too.
    await expect(gate.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(Promise.all([gate.run(async () => 1), gate.run(async () => 2), gate.run(async () => 3)])).resolves.toEqual([1, 2, 3]);
  });
});
