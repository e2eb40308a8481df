import { ChildProcess } from 'node:child_process';
import { stopChild } from './dependencies';
import { RestartPolicy, RestartPolicyOptions } from './restart-policy';

export interface SupervisorEvents {
  say(line: string): void;
  /** Before the cluster is ready, or in a crash loop: the launcher stops everything. */
  giveUp(message: string): void;
}

/**
 * One service process of the all-in-one launcher, restarted when it dies. Before `arm()` (the cluster is not
 * ready yet) an exit is a start-up failure and ends everything, as a misconfiguration should; after it, a crash is
 * logged with its exit code or signal and the service comes back after the policy's backoff, while the other
 * services keep answering (a run that needs the missing one gets 503 from the gateway).
 */
export class SupervisedService {
  private child: ChildProcess | null = null;
  private armed = false;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private startedAt = 0;
  private readonly policy: RestartPolicy;

  constructor(
    readonly name: string,
    private readonly spawnChild: () => ChildProcess,
    private readonly ready: () => Promise<boolean>,
    private readonly events: SupervisorEvents,
    policy: RestartPolicyOptions,
  ) {
    this.policy = new RestartPolicy(policy);
  }

  start(): void {
    const child = this.spawnChild();
    this.child = child;
    this.startedAt = Date.now();
    child.once('exit', (code, signal) => this.exited(child, code, signal));
  }

  /** From now on a crash is restarted rather than fatal. */
  arm(): void {
    this.armed = true;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.child) await stopChild(this.child);
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping || child !== this.child) return;
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    if (!this.armed) {
      this.events.giveUp(`${this.name} exited (${how}) before the cluster was ready; stopping everything`);
      return;
    }
    const verdict = this.policy.onCrash(Date.now(), this.startedAt);
    if (!verdict.restart) {
      this.events.giveUp(`${this.name} crashed ${verdict.recentCrashes} times within a minute (last: ${how}); it is in a crash loop, stopping everything`);
      return;
    }
    this.events.say(`all-in-one: ${this.name} crashed (${how}); restarting in ${verdict.delayMs} ms`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      const restartedAt = Date.now();
      this.start();
      void this.announceReady(restartedAt);
    }, verdict.delayMs);
  }

  private async announceReady(restartedAt: number): Promise<void> {
    const current = this.child;
    while (!this.stopping && this.child === current) {
      if (await this.ready().catch(() => false)) {
        this.events.say(`all-in-one: ${this.name} is back (pid ${current?.pid}, ready ${Date.now() - restartedAt} ms after its restart)`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
