import { deleteInBatches, isForeignKeyViolation, isUniqueViolation, rowsAffected, rowsReturned } from './postgres';

describe('PostgreSQL errors', () => {
  it('tells a unique violation and a foreign-key violation by their SQLSTATE', () => {
    const duplicate = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), { code: '23505' });
    const orphan = Object.assign(new Error('insert or update violates foreign key constraint'), { code: '23503' });
    expect(isUniqueViolation(duplicate)).toBe(true);
    expect(isUniqueViolation(orphan)).toBe(false);
    expect(isForeignKeyViolation(orphan)).toBe(true);
    expect(isForeignKeyViolation(duplicate)).toBe(false);
  });

  it('is false for anything without a SQLSTATE', () => {
    for (const error of [new Error('23505'), null, undefined, '23505', { code: 23505 }]) {
      expect(isUniqueViolation(error)).toBe(false);
      expect(isForeignKeyViolation(error)).toBe(false);
    }
  });
});

describe('results of UPDATE and DELETE through TypeORM', () => {
  it('reads the rows of RETURNING and the count of changed rows', () => {
    const answer = [[{ slug: 'a' }, { slug: 'b' }], 2];
    expect(rowsReturned<{ slug: string }>(answer)).toEqual([{ slug: 'a' }, { slug: 'b' }]);
    expect(rowsAffected(answer)).toBe(2);
    expect(rowsReturned([[], 0])).toEqual([]);
    expect(rowsAffected([[], 0])).toBe(0);
  });

  it('refuses what a SELECT or INSERT answers, rather than reading a row as the rows', () => {
    for (const answer of [[{ id: 1 }, { id: 2 }], [], [[{ id: 1 }]], undefined, null, { rows: [] }]) {
      expect(() => rowsReturned(answer)).toThrow(TypeError);
      expect(() => rowsAffected(answer)).toThrow(TypeError);
    }
  });
});

describe('deleteInBatches', () => {
  /** A table of `rows` rows that a DELETE … LIMIT `batch` shrinks, recording what it was sent. */
  function table(rows: number, batch: number) {
    const sent: Array<{ sql: string; parameters?: unknown[] }> = [];
    return {
      sent,
      query: async (sql: string, parameters?: unknown[]) => {
        sent.push({ sql, parameters });
        const count = Math.min(rows, batch);
        rows -= count;
        return [[], count];
      },
    };
  }

  it('repeats the statement until one deletes fewer than a batch, and adds up the counts', async () => {
    const db = table(25, 10);
    expect(await deleteInBatches(db, 'DELETE x', [1], 10)).toBe(25);
    expect(db.sent).toEqual([
      { sql: 'DELETE x', parameters: [1] },
      { sql: 'DELETE x', parameters: [1] },
      { sql: 'DELETE x', parameters: [1] },
    ]);
  });

  it('runs once more after an exact multiple of the batch, to see that nothing is left', async () => {
    const db = table(20, 10);
    expect(await deleteInBatches(db, 'DELETE x', [], 10)).toBe(20);
    expect(db.sent).toHaveLength(3);
  });

  it('runs once when nothing is due', async () => {
    const db = table(0, 10);
    expect(await deleteInBatches(db, 'DELETE x', [], 10)).toBe(0);
    expect(db.sent).toHaveLength(1);
  });

  it('refuses an answer that is not a DELETE’s count', async () => {
    await expect(deleteInBatches({ query: async () => [{ id: 1 }] }, 'SELECT 1', [], 10)).rejects.toThrow(TypeError);
  });
});
