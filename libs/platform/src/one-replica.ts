import { DataSource } from 'typeorm';

/**
 * Runs `work` only where PostgreSQL's session advisory lock named `key` is taken, and answers null where another
 * replica holds it. The lock lives on a connection of its own for the length of `work`, and ends with that session
 * whatever happens to the process, so a replica that dies mid-round holds up nobody.
 */
export async function onOneReplica<T>(db: DataSource, key: string, work: () => Promise<T>): Promise<T | null> {
  const lock = db.createQueryRunner();
  await lock.connect();
  try {
    const [answer] = (await lock.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key])) as Array<{ locked: boolean }>;
    // A SELECT without FROM answers exactly one row.
    if (!answer!.locked) return null;
    try {
      return await work();
    } finally {
      await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
    }
  } finally {
    await lock.release();
  }
}
