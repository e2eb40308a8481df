import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Subscription as RxSubscription } from 'rxjs';
import { DataSource } from 'typeorm';
import { BROADCAST_SUBJECTS, DecisionChangedNotice } from '@ds/contracts';
import { NatsLink, PLATFORM, publishBroadcast } from '@ds/platform';
import { pgPool } from '../pg-pool';
import type { Subscription } from 'nats';

/** What a run needs of a decision row. */
export interface RunnableDecision {
  id: string;
  slug: string;
  activeVersion: number | null;
  endpointEnabled: boolean;
}

/** A decision that does not exist is cached too, as null: slugs that are not there are asked for as often. */
interface Entry {
  decision: RunnableDecision | null;
}

const MAX_ENTRIES = 10_000;
/** Bounds how long a replica can miss a change whose broadcast it never received. */
const ENTRY_TTL_MS = 5_000;
const CHANGED_SUBJECT = BROADCAST_SUBJECTS.runnerDecisionChanged;

const FIND_DECISION = {
  name: 'decision-runner.find-decision',
  text: 'SELECT id, slug, active_version, endpoint_enabled FROM decisions WHERE workspace_id = $1 AND slug = $2',
};

function keyOf(workspaceId: string, slug: string): string {
  return `${workspaceId}\u0000${slug}`;
}

/**
 * The decision rows runs look up, kept per replica. Creating, deploying or switching the endpoint of a
 * decision is broadcast to every replica after it commits, and each drops its entry, so the next run sees
 * the change; a replica that lost its NATS connection may have missed broadcasts and starts empty again,
 * and the TTL bounds whatever else slips through.
 */
@Injectable()
export class DecisionCache implements OnModuleDestroy {
  private readonly entries = new LRUCache<string, Entry>({ max: MAX_ENTRIES, ttl: ENTRY_TTL_MS });
  /** Reads in flight, shared by the runs that miss on the same key at once. */
  private readonly reading = new Map<string, Promise<RunnableDecision | null>>();
  /** Moves on every invalidation: a read begun before it may have seen the old row and is not kept. */
  private generation = 0;
  private readonly changes: Subscription;
  private readonly disconnects: RxSubscription;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
  ) {
    this.changes = nats.connection.subscribe(CHANGED_SUBJECT, { callback: (_error, message) => this.received(message.string()) });
    this.disconnects = nats.disconnects.subscribe(() => this.forget(null));
  }

  async get(workspaceId: string, slug: string): Promise<RunnableDecision | null> {
    const key = keyOf(workspaceId, slug);
    const cached = this.entries.get(key);
    if (cached) return cached.decision;
    const pending = this.reading.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const read = this.read(workspaceId, slug).finally(() => {
      if (this.reading.get(key) === read) this.reading.delete(key);
    });
    this.reading.set(key, read);
    const decision = await read;
    if (generation === this.generation) this.entries.set(key, { decision });
    return decision;
  }

  /** Called once a change to the decision has committed: every replica, this one included, drops it. */
  changed(workspaceId: string, slug: string): void {
    this.forget(keyOf(workspaceId, slug));
    try {
      publishBroadcast(this.nats, CHANGED_SUBJECT, { workspaceId, slug });
    } catch (error) {
      this.nats.logger.warn({ err: error, workspaceId, slug }, 'could not broadcast a decision change; other replicas see it when their entry expires');
    }
  }

  onModuleDestroy(): void {
    this.changes.unsubscribe();
    this.disconnects.unsubscribe();
  }

  private received(text: string): void {
    let change: Partial<DecisionChangedNotice>;
    try {
      change = JSON.parse(text) as Partial<DecisionChangedNotice>;
    } catch {
      change = {};
    }
    // A message this replica cannot read still means something changed.
    this.forget(typeof change.workspaceId === 'string' && typeof change.slug === 'string' ? keyOf(change.workspaceId, change.slug) : null);
  }

  /** Drops one entry, or all of them when `key` is null. */
  private forget(key: string | null): void {
    this.generation += 1;
    if (key === null) {
      this.entries.clear();
      this.reading.clear();
    } else {
      this.entries.delete(key);
      this.reading.delete(key);
    }
  }

  private async read(workspaceId: string, slug: string): Promise<RunnableDecision | null> {
    const { rows } = await pgPool(this.db).query<{ id: string; slug: string; active_version: number | null; endpoint_enabled: boolean }>({
      ...FIND_DECISION,
      values: [workspaceId, slug],
    });
    const row = rows[0];
    return row ? { id: row.id, slug: row.slug, activeVersion: row.active_version, endpointEnabled: row.endpoint_enabled } : null;
  }
}
