import { LRUCache } from 'lru-cache';

/**
 * A steady rate with a burst allowance, as the generic cell rate algorithm keeps it: one number per key, the
 * theoretical arrival time (`tat`) of the next request if every earlier one had come at exactly the rate.
 */
export interface Pace {
  /** Requests per second once the burst is used. */
  perSecond: number;
  /** Requests admitted at once from a key that was quiet long enough. */
  burst: number;
  /** A request that would wait longer than this is refused instead of held. */
  maxWaitMs: number;
}

export type PaceTurn =
  /** Go after `waitMs` (0: at once); `tat` is the key's next arrival time. */
  | { kind: 'go'; waitMs: number; tat: number }
  /** Refused: a request sent `retryAfterMs` from now is held again rather than refused. */
  | { kind: 'refused'; retryAfterMs: number };

/**
 * The turn of a request arriving at `now` from a key whose arrival time is `tat` (undefined: never seen). Requests
 * are served in arrival order: each one's start is the later of its arrival and the moment the burst allowance has
 * room for it, so a client asking in a tight loop is held to the rate instead of being answered faster with
 * refusals it would only repeat.
 */
export function paceTurn(pace: Pace, tat: number | undefined, now: number): PaceTurn {
  const interval = 1000 / pace.perSecond;
  const tolerance = interval * (pace.burst - 1);
  const arrival = Math.max(tat ?? now, now);
  const start = Math.max(now, arrival - tolerance);
  const waitMs = start - now;
  if (waitMs > pace.maxWaitMs) return { kind: 'refused', retryAfterMs: waitMs - pace.maxWaitMs };
  return { kind: 'go', waitMs, tat: arrival + interval };
}

/**
 * In-memory pacing per key (a session, say), one replica's view: it bounds what one client costs this process
 * before anything is looked up for it. Keys unseen for longer than a full burst takes to refill are forgotten, and
 * at most `maxKeys` are held (the least recent go first; a forgotten key starts with a full burst).
 */
export class Pacer {
  private readonly arrivals: LRUCache<string, number>;

  constructor(
    private readonly pace: Pace,
    maxKeys: number,
    private readonly clock: () => number = Date.now,
  ) {
    const refillMs = Math.ceil((1000 / pace.perSecond) * pace.burst + pace.maxWaitMs);
    this.arrivals = new LRUCache<string, number>({ max: maxKeys, ttl: refillMs, ttlAutopurge: false });
  }

  /** Takes the key's next turn: the wait before going, or a refusal that changes nothing. */
  take(key: string): PaceTurn {
    const turn = paceTurn(this.pace, this.arrivals.get(key), this.clock());
    if (turn.kind === 'go') this.arrivals.set(key, turn.tat);
    return turn;
  }
}
