import { DataSource } from 'typeorm';
import { dataSourceOptions } from './database';
import { onOneReplica } from './one-replica';
import { createLogger } from './logger';
import { PeriodicJob } from './periodic-job';

/** Two data sources stand for two replicas: advisory locks are per session, so each has its own. */
const URL_ = process.env.E2E_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const definition = { schema: 'public', entities: [], migrations: [] };
let replicas: DataSource[] = [];

beforeAll(async () => {
  replicas = await Promise.all([1, 2].map(() => new DataSource(dataSourceOptions(URL_, definition, 3)).initialize()));
});

afterAll(async () => {
  await Promise.all(replicas.map((db) => db.destroy()));
});

describe('work on one replica', () => {
  it('runs where the lock is taken and answers null where another replica holds it, then lets the next take it', async () => {
    const key = `one-replica-spec:${process.pid}:${Date.now()}`;
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const first = onOneReplica(replicas[0]!, key, async () => {
      entered();
      await holding;
      return 'first';
    });
    await inside;
    expect(await onOneReplica(replicas[1]!, key, async () => 'second')).toBeNull();
    release();
    expect(await first).toBe('first');
    expect(await onOneReplica(replicas[1]!, key, async () => 'second')).toBe('second');
  });

  it('gives the lock back when the work fails', async () => {
    const key = `one-replica-spec-failing:${process.pid}:${Date.now()}`;
    await expect(onOneReplica(replicas[0]!, key, async () => Promise.reject(new Error('the work failed')))).rejects.toThrow('the work failed');
    expect(await onOneReplica(replicas[1]!, key, async () => 'taken')).toBe('taken');
  });

  it('tells the work when the lock’s session is lost, and lets another replica take the lock', async () => {
    const key = `one-replica-spec-lost:${process.pid}:${Date.now()}`;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const first = onOneReplica(replicas[0]!, key, async (held) => {
      entered();
      await new Promise((resolve) => held.addEventListener('abort', resolve));
      return held.aborted;
    });
    await inside;
    // The session holding the advisory lock of this key (its low 32 bits: hashtext is an int4).
    await replicas[1]!.query(
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND objid::bigint = (hashtext($1)::bigint & 4294967295)`,
      [key],
    );
    expect(await first).toBe(true);
    expect(await onOneReplica(replicas[1]!, key, async () => 'taken')).toBe('taken');
  });

  it('keeps a periodic job’s rounds to one replica at a time', async () => {
    const key = `one-replica-spec-job:${process.pid}:${Date.now()}`;
    let inRound = 0;
    let mostInRound = 0;
    let rounds = 0;
    const round = async () => {
      inRound++;
      mostInRound = Math.max(mostInRound, inRound);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inRound--;
      rounds++;
    };
    const logger = createLogger('test', 'silent');
    const jobs = replicas.map((db) => new PeriodicJob(5, round, logger, 'round failed', { oneReplica: { db, lockKey: key } }));
    jobs.forEach((job) => job.start());
    for (let tries = 0; tries < 400 && rounds < 6; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    await Promise.all(jobs.map((job) => job.stop()));
    expect(rounds).toBeGreaterThanOrEqual(6);
    expect(mostInRound).toBe(1);
  });
});
