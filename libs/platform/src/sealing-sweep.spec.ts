import { createLogger } from './logger';
import { SealedTable, sealAtRest } from './sealing-sweep';

interface Row {
  id: number;
  plaintext: string | null;
  sealedUnder: string | null;
}

/** An in-memory table read two rows at a time; `changedMeanwhile` rows refuse the conditional write. */
function table(rows: Row[], changedMeanwhile: number[] = []): SealedTable<Row, number> & { reads: Array<number | null>; written: number[] } {
  const reads: Array<number | null> = [];
  const written: number[] = [];
  return {
    reads,
    written,
    secrets: 'test secrets',
    keyVariable: 'TEST_KEY',
    primaryKeyId: 'new',
    nextBatch: async (after) => {
      reads.push(after);
      return rows.filter((row) => row.id > (after ?? 0) && (row.plaintext !== null || row.sealedUnder !== 'new')).slice(0, 2);
    },
    cursorOf: (row) => row.id,
    isPlaintext: (row) => row.plaintext !== null,
    plaintextOf: (row) => row.plaintext ?? (row.sealedUnder === 'gone' ? null : `secret-${row.id}`),
    writeSealed: async (row) => {
      if (changedMeanwhile.includes(row.id)) return false;
      written.push(row.id);
      row.plaintext = null;
      row.sealedUnder = 'new';
      return true;
    },
  };
}

const logger = createLogger('test', 'silent');

describe('sealAtRest', () => {
  it('seals plaintext rows, seals again rows under an old key, and counts the rows no key opens', async () => {
    const rows: Row[] = [
      { id: 1, plaintext: 'whsec_1', sealedUnder: null },
      { id: 2, plaintext: null, sealedUnder: 'new' },
      { id: 3, plaintext: null, sealedUnder: 'old' },
      { id: 4, plaintext: null, sealedUnder: 'gone' },
      { id: 5, plaintext: 'whsec_5', sealedUnder: null },
    ];
    const sweep = table(rows);
    expect(await sealAtRest(sweep, logger)).toEqual({ sealed: 2, resealed: 1, unreadable: 1 });
    expect(sweep.written).toEqual([1, 3, 5]);
    // Each batch starts after the last row of the one before, so a row left unreadable is not read twice.
    expect(sweep.reads).toEqual([null, 3, 5]);
  });

  it('counts nothing for a row changed between its read and its write', async () => {
    const sweep = table(
      [
        { id: 1, plaintext: 'whsec_1', sealedUnder: null },
        { id: 2, plaintext: null, sealedUnder: 'old' },
      ],
      [1, 2],
    );
    expect(await sealAtRest(sweep, logger)).toEqual({ sealed: 0, resealed: 0, unreadable: 0 });
    expect(sweep.written).toEqual([]);
  });

  it('reads once and writes nothing when every secret is sealed under the first key', async () => {
    const sweep = table([{ id: 1, plaintext: null, sealedUnder: 'new' }]);
    expect(await sealAtRest(sweep, logger)).toEqual({ sealed: 0, resealed: 0, unreadable: 0 });
    expect(sweep.reads).toEqual([null]);
  });
});
