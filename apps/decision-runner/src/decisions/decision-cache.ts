import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BROADCAST_SUBJECTS } from '@ds/contracts';
import { BroadcastInvalidatedCache, NatsLink, natsNotices, NoticeCodec, PLATFORM } from '@ds/platform';
import { DecisionStore, RunnableDecision } from './decision.store';

export type { RunnableDecision } from './decision.store';

const MAX_ENTRIES = 10_000;
/** Bounds how long a replica can miss a change whose broadcast it never received. */
const ENTRY_TTL_MS = 5_000;
const CHANGED_SUBJECT = BROADCAST_SUBJECTS.runnerDecisionChanged;

interface DecisionChange {
  workspaceId: string;
  slug: string;
}

const SEPARATOR = '\u0000';

function keyOf(workspaceId: string, slug: string): string {
  return `${workspaceId}${SEPARATOR}${slug}`;
}

/** Notices name the decision as JSON; a message this replica cannot read still means something changed. */
const DECISION_NOTICE: NoticeCodec<string> = {
  encode(key) {
    // Keys are built by keyOf, and workspace ids never hold the separator.
    const separator = key.indexOf(SEPARATOR);
    const workspaceId = key.slice(0, separator);
    const slug = key.slice(separator + 1);
    return JSON.stringify({ workspaceId, slug } satisfies DecisionChange);
  },
  decode(payload) {
    let change: Partial<DecisionChange>;
    try {
      change = JSON.parse(payload) as Partial<DecisionChange>;
    } catch {
      return null;
    }
    return typeof change?.workspaceId === 'string' && typeof change.slug === 'string' ? keyOf(change.workspaceId, change.slug) : null;
  },
};

/**
 * The decision rows runs look up, kept per replica. Creating, deploying or switching the endpoint of a
 * decision is broadcast to every replica after it commits, and each drops its entry, so the next run sees
 * the change; a replica that lost its NATS connection may have missed broadcasts and starts empty again,
 * and the TTL bounds whatever else slips through. A decision that does not exist is kept too, as a miss:
 * slugs that are not there are asked for as often.
 */
@Injectable()
export class DecisionCache implements OnModuleDestroy {
  private readonly decisions: BroadcastInvalidatedCache<string, RunnableDecision>;
  private readonly store: DecisionStore;

  constructor(
    @InjectDataSource() db: DataSource,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
  ) {
    this.store = DecisionStore.of(db);
    this.decisions = new BroadcastInvalidatedCache({
      bus: natsNotices(nats),
      subject: CHANGED_SUBJECT,
      codec: DECISION_NOTICE,
      max: MAX_ENTRIES,
      ttlMs: ENTRY_TTL_MS,
      missTtlMs: ENTRY_TTL_MS,
      forgetAllOnDisconnect: true,
    });
    this.decisions.listen();
  }

  get(workspaceId: string, slug: string): Promise<RunnableDecision | null> {
    return this.decisions.get(keyOf(workspaceId, slug), () => this.store.runnable(workspaceId, slug));
  }

  /** Called once a change to the decision has committed: every replica, this one included, drops it. */
  changed(workspaceId: string, slug: string): void {
    try {
      this.decisions.invalidate(keyOf(workspaceId, slug));
    } catch (error) {
      this.nats.logger.warn({ err: error, workspaceId, slug }, 'could not broadcast a decision change; other replicas see it when their entry expires');
    }
  }

  onModuleDestroy(): void {
    this.decisions.close();
  }
}
