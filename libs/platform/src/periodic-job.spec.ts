import { createLogger } from './logger';
import { PeriodicJob } from './periodic-job';
import { currentDeadline, currentRequestId, runWithRequestContext } from './request-context';

const logger = createLogger('test', 'silent');

/** Resolves once `condition` holds; the rounds here are 5 ms apart, so a few hundred tries is plenty. */
async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; tries < 400 && !condition(); tries++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

describe('PeriodicJob', () => {
  it('runs round after round, never two at once', async () => {
    let rounds = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    const job = new PeriodicJob(
      5,
      async () => {
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        // Each round lasts longer than the interval: a timer that did not wait for it would overlap them.
        await new Promise((resolve) => setTimeout(resolve, 20));
        rounds++;
        inFlight--;
      },
      logger,
      'round failed',
    );
    job.start();
    job.start();
    await until(() => rounds >= 3);
    await job.stop();
    expect(mostInFlight).toBe(1);
  });

  it('goes on after a failed round, logging it', async () => {
    const errors: string[] = [];
    const watching = { ...logger, error: (_context: unknown, message: string) => errors.push(message) } as unknown as typeof logger;
    let rounds = 0;
    const job = new PeriodicJob(
      5,
      async () => {
        rounds++;
        if (rounds === 1) throw new Error('the database is away');
      },
      watching,
      'could not purge',
    );
    job.start();
    await until(() => rounds >= 2);
    await job.stop();
    expect(errors[0]).toBe('could not purge');
  });

  it('waits for the round in progress when stopped, and starts none after', async () => {
    let finished = false;
    let started = 0;
    const job = new PeriodicJob(
      5,
      async () => {
        started++;
        await new Promise((resolve) => setTimeout(resolve, 30));
        finished = true;
      },
      logger,
      'round failed',
    );
    job.start();
    await until(() => started === 1);
    await job.stop();
    expect(finished).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started).toBe(1);
  });

  it('brings the next round forward when woken, right after the round in progress', async () => {
    let rounds = 0;
    let release!: () => void;
    const job = new PeriodicJob(
      60_000,
      async () => {
        rounds++;
        if (rounds === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      logger,
      'round failed',
    );
    job.wake();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(rounds).toBe(0);
    job.start();
    job.wake();
    await until(() => rounds === 1);
    // Woken during the round: the next comes as soon as it ends, not a minute later.
    job.wake();
    release();
    await until(() => rounds === 2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(rounds).toBe(2);
    await job.stop();
  });

  it('runs a round woken by a request outside that request, so its deadline does not cut the round short', async () => {
    const seen: Array<[string | undefined, number | undefined]> = [];
    const job = new PeriodicJob(60_000, async () => void seen.push([currentRequestId(), currentDeadline()]), logger, 'round failed');
    job.start();
    runWithRequestContext({ requestId: 'req_waking', deadline: Date.now() - 1 }, () => job.wake());
    await until(() => seen.length === 1);
    runWithRequestContext({ requestId: 'req_waking_again', deadline: Date.now() - 1 }, () => job.wake());
    await until(() => seen.length === 2);
    await job.stop();
    expect(seen).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });

  it('aborts the round’s signal when stopped, and waits for the round to end', async () => {
    let aborted = false;
    let ended = false;
    const job = new PeriodicJob(
      5,
      async (signal) => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        aborted = signal.aborted;
        await new Promise((resolve) => setTimeout(resolve, 20));
        ended = true;
      },
      logger,
      'round failed',
    );
    job.start();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(ended).toBe(false);
    await job.stop();
    expect(aborted).toBe(true);
    expect(ended).toBe(true);
  });

  it('does nothing with an interval of 0', async () => {
    let rounds = 0;
    const job = new PeriodicJob(0, async () => void rounds++, logger, 'round failed');
    job.start();
    await new Promise((resolve) => setTimeout(resolve, 30));
    await job.stop();
    expect(rounds).toBe(0);
  });
});
