import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';
import { includedRoom } from '@ds/billing';
import { isForeignKeyViolation, isUniqueViolation } from '@ds/platform';
import { IncludedBudget, IncludedReserveStore } from './included-reserve.store';
import { effectivePlan } from './plans';

/** PostgreSQL errors that only mean "not the common case": a racing duplicate execution id, a missing account. */
function leaveToLockedPath(error: unknown): boolean {
  return isUniqueViolation(error) || isForeignKeyViolation(error);
}

/** The most executions one statement reserves. */
const GROUP_MAX = 256;
/** Statements one group may make before it leaves the choice to the locked path, while other writers move its budget. */
const TRIES = 3;
/** Budget rows whose last known state is kept: one a workspace and period in use. */
const BUDGETS_KEPT = 10_000;

export interface IncludedHold {
  workspaceId: string;
  executionId: string;
  includedVolumeId: string;
  decisionsBilledId: string;
  periodStart: Date;
}

interface Waiting {
  hold: IncludedHold;
  done: (held: boolean) => void;
  failed: (error: unknown) => void;
}

/**
 * Step 6 for the common case, while the period's included volume has room: one decision of it per execution, in
 * the order asked, as many as there is room for, in one statement (IncludedReserveStore) that takes them only if
 * they still fit under the plan they were counted under. The room is includedRoom of `@ds/billing` over the budget
 * this process saw last (the previous statement's answer on that row), so the common case is one statement, other
 * writers' takes meanwhile included; when they no longer fit (near the edge, or after a plan change), the
 * statement takes nothing and answers the budget as it is, and the room is computed again from it (at most TRIES
 * statements). The reserves of one budget row share statements: the first goes
 * at once, and the ones that arrive while it runs go together in the next (group commit), so a busy workspace pays
 * one round trip and one commit for many runs instead of queueing on its row one commit at a time.
 *
 * No 402 is possible while the included volume has room, so the spec's order of refusals is untouched: every
 * other case (an execution id seen before, a new account or period, included volume used up) takes nothing here
 * and goes to the locked path.
 */
export class FastReserve {
  private readonly store: IncludedReserveStore;
  private readonly queues = new Map<string, Waiting[]>();
  private readonly budgets = new LRUCache<string, IncludedBudget>({ max: BUDGETS_KEPT });

  constructor(db: DataSource) {
    this.store = new IncludedReserveStore(db);
  }

  /** True when the decision was taken from the included volume; false when the locked path must decide. */
  tryIncluded(hold: IncludedHold): Promise<boolean> {
    return new Promise((done, failed) => {
      const queue = this.queues.get(hold.includedVolumeId);
      if (queue) {
        queue.push({ hold, done, failed });
        return;
      }
      this.queues.set(hold.includedVolumeId, []);
      void this.drain(hold.includedVolumeId, [{ hold, done, failed }]);
    });
  }

  private async drain(budgetId: string, first: Waiting[]): Promise<void> {
    let group = first;
    while (group.length > 0) {
      await this.reserveGroup(group);
      const queue = this.queues.get(budgetId)!;
      group = queue.splice(0, GROUP_MAX);
    }
    this.queues.delete(budgetId);
  }

  private async reserveGroup(group: Waiting[]): Promise<void> {
    const first = group[0];
    // drain only passes non-empty groups; an empty one would have nothing to reserve.
    if (first === undefined) return;
    const { hold } = first;
    try {
      const held = new Set(
        await this.take(
          hold,
          group.map((waiting) => waiting.hold.executionId),
        ),
      );
      for (const waiting of group) waiting.done(held.has(waiting.hold.executionId));
    } catch (error) {
      this.budgets.delete(hold.includedVolumeId);
      const leave = leaveToLockedPath(error);
      for (const waiting of group) {
        if (leave) waiting.done(false);
        else waiting.failed(error);
      }
    }
  }

  /** The executions held; none when the volume is used up, missing, or kept moving by other writers. */
  private async take(hold: IncludedHold, executionIds: string[]): Promise<string[]> {
    let seen = this.budgets.get(hold.includedVolumeId) ?? null;
    for (let tries = 0; tries < TRIES; tries++) {
      const included = seen ? effectivePlan(seen.plan, seen.overrides).included_decisions : 0;
      const take = seen ? Math.max(0, Math.min(includedRoom(included, seen.used), executionIds.length)) : 0;
      const result = await this.store.take({ ...hold, executionIds, seen, included, take });
      if (!result.budget) return [];
      seen = { ...result.budget, used: result.budget.used + result.held.length };
      this.budgets.set(hold.includedVolumeId, seen);
      if (result.fits && take > 0) return result.held;
      // Nothing taken: the room is computed again from the budget as the statement found it, unless there is none.
      if (includedRoom(effectivePlan(seen.plan, seen.overrides).included_decisions, seen.used) <= 0) return [];
    }
    return [];
  }
}
