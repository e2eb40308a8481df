import { DataSource } from 'typeorm';
import type { PoolClient } from 'pg';

/**
 * Runs `work` only where PostgreSQL's session advisory lock named `key` is taken, and answers null where another
 * replica holds it. The lock lives on a connection of its own for the length of `work`, and ends with that session
 * whatever happens to the process, so a replica that dies mid-round holds up nobody. `held` aborts when that
 * connection fails, and the lock with it: long work takes nothing more on from then.
 */
export async function onOneReplica<T>(db: DataSource, key: string, work: (held: AbortSignal) => Promise<T>): Promise<T | null> {
  const lock = db.createQueryRunner();
  const session = (await lock.connect()) as PoolClient;
  const held = new AbortController();
  const lost = () => held.abort();
  session.on('error', lost);
  try {
    const [answer] = (await lock.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key])) as Array<{ locked: boolean }>;
    // A SELECT without FROM answers exactly one row.
    if (!answer!.locked) return null;
    try {
      return await work(held.signal);
    } finally {
      // A lost session took the lock with it.
      if (!held.signal.aborted) await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
    }
  } finally {
    session.off('error', lost);
    await lock.release();
  }
}
