import { DataSource, EntityManager } from 'typeorm';

/**
 * Runs `work` in one transaction, as DataSource.transaction does, but rolls it back instead of committing when
 * `work` answers `commit: false`: a decision taken under the locks that must leave nothing written (a refusal, or
 * a reserve to decide again after reclaiming leases) is then a value, not an exception.
 */
export async function transactionUnless<T>(db: DataSource, work: (manager: EntityManager) => Promise<{ commit: boolean; value: T }>): Promise<T> {
  const runner = db.createQueryRunner();
  try {
    await runner.startTransaction();
    const result = await work(runner.manager);
    if (result.commit) await runner.commitTransaction();
    else await runner.rollbackTransaction();
    return result.value;
  } catch (error) {
    try {
      await runner.rollbackTransaction();
    } catch {
      // The work's own failure is what the caller needs to see, not a rollback's on a broken connection.
    }
    throw error;
  } finally {
    await runner.release();
  }
}
