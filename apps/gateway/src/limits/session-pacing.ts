import { Counter } from 'prom-client';
import { Metrics, Pace, Pacer } from '@ds/platform';
import { sha256 } from '../auth/tokens';
import { rateLimited } from './credential-limits';

/** Sessions this replica paces at once; past it the least recent start afresh. */
const PACED_SESSIONS_MAX = 100_000;

/**
 * The pace of one application session (or embed session) on this replica, taken before the session is looked
 * up: a person clicking through the web application stays inside the burst, while a script asking in a tight
 * loop is held to the steady rate, so that however fast it asks, it costs this gateway and the services behind
 * it a bounded share and cannot crowd out other workspaces' live runs. Requests past the rate wait their turn;
 * only a request that would wait longer than the pace allows is refused, with 429 and `Retry-After`.
 */
export class SessionPacing {
  private readonly pacer: Pacer;
  private readonly paced: Counter<'outcome'>;

  constructor(pace: Pace, metrics: Metrics) {
    this.pacer = new Pacer(pace, PACED_SESSIONS_MAX);
    this.paced = new Counter({
      name: 'decision_service_application_paced_total',
      help: 'Application requests held to their session’s pace (held) or refused because the wait would be too long (refused)',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
  }

  /** Resolves when the session may go on; throws 429 when its wait would be too long. */
  async wait(sessionToken: string): Promise<void> {
    // Keyed by a hash, so that this replica's memory holds no usable session token.
    const turn = this.pacer.take(sha256(sessionToken));
    if (turn.kind === 'refused') {
      this.paced.inc({ outcome: 'refused' });
      throw rateLimited('Too many requests from this session', Math.max(1, Math.ceil(turn.retryAfterMs / 1000)));
    }
    if (turn.waitMs <= 0) return;
    this.paced.inc({ outcome: 'held' });
    await new Promise<void>((resolve) => setTimeout(resolve, turn.waitMs));
  }
}
