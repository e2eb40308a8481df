/** A held slot; releasing it twice is harmless. */
export interface SlotLease {
  release(): void;
}

/** Answered instead of a wait when as many calls as allowed already wait for a slot of the credential. */
export const QUEUE_FULL = 'queue-full';
export type QueueFull = typeof QUEUE_FULL;

interface Waiter {
  grant(lease: SlotLease): void;
}

/**
 * Counting semaphores in this process, one per shared credential, with waiters served first come first
 * served. Used alone when there is no Redis, and while Redis is away.
 */
export class LocalSemaphores {
  private readonly states = new Map<string, { held: number; waiters: Waiter[] }>();

  /**
   * A lease, or null when no slot frees before `deadline` (epoch ms), or QUEUE_FULL at once when `maxWaiters`
   * calls already wait.
   */
  acquire(name: string, limit: number, deadline: number): Promise<SlotLease | null>;
  acquire(name: string, limit: number, deadline: number, maxWaiters: number): Promise<SlotLease | null | QueueFull>;
  acquire(name: string, limit: number, deadline: number, maxWaiters = Infinity): Promise<SlotLease | null | QueueFull> {
    const state = this.stateOf(name);
    if (state.held < limit && state.waiters.length === 0) {
      state.held++;
      return Promise.resolve(this.lease(name));
    }
    if (state.waiters.length >= maxWaiters) return Promise.resolve(QUEUE_FULL);
    const msLeft = deadline - Date.now();
    if (msLeft <= 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: (lease) => {
          clearTimeout(timer);
          resolve(lease);
        },
      };
      const timer = setTimeout(() => {
        state.waiters.splice(state.waiters.indexOf(waiter), 1);
        resolve(null);
      }, msLeft);
      state.waiters.push(waiter);
    });
  }

  /** Slots held right now (for tests and diagnostics). */
  held(name: string): number {
    return this.states.get(name)?.held ?? 0;
  }

  private stateOf(name: string) {
    let state = this.states.get(name);
    if (!state) {
      state = { held: 0, waiters: [] };
      this.states.set(name, state);
    }
    return state;
  }

  private lease(name: string): SlotLease {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const state = this.stateOf(name);
        // The slot passes straight to the longest waiter, so a newcomer cannot overtake it.
        const next = state.waiters.shift();
        if (next) next.grant(this.lease(name));
        else state.held--;
      },
    };
  }
}
