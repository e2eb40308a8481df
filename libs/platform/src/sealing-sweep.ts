import { Logger } from './logger';

/** How one table's secrets are found, read and written again by `sealAtRest`. */
export interface SealedTable<Row, Cursor> {
  /** What the log calls the secrets ("signing secrets"), and the variable that holds their keys. */
  secrets: string;
  keyVariable: string;
  /** The id of the keyring's first key: the one every secret ends up sealed under. */
  primaryKeyId: string;
  /**
   * The next rows after `after` (null: from the start), in cursor order, that are still in plaintext or sealed
   * under another key than the first.
   */
  nextBatch(after: Cursor | null): Promise<Row[]>;
  cursorOf(row: Row): Cursor;
  /** True when the row holds its secret in plaintext, stored before sealing existed. */
  isPlaintext(row: Row): boolean;
  /** The secret, or null when no key of the ring opens it. */
  plaintextOf(row: Row): string | null;
  /** Seals the secret under the first key, if the row is still as it was read; answers whether it wrote. */
  writeSealed(row: Row, secret: string): Promise<boolean>;
}

export interface SealingCounts {
  /** Plaintext secrets sealed. */
  sealed: number;
  /** Secrets sealed again under the first key after a rotation. */
  resealed: number;
  /** Secrets no key of the ring opens, left as they are. */
  unreadable: number;
}

/**
 * Seals every secret of a table still in plaintext and, after a rotation, seals again under the first key every
 * secret sealed under another, so that the older keys can be removed once no row names them. Each row is visited
 * once; each write is conditional on the row being unchanged, so replicas sweeping at once, or a secret changed
 * meanwhile, lose nothing. A secret no key opens is left as it is, counted and reported.
 */
export async function sealAtRest<Row, Cursor>(table: SealedTable<Row, Cursor>, logger: Logger): Promise<SealingCounts> {
  const counts: SealingCounts = { sealed: 0, resealed: 0, unreadable: 0 };
  let after: Cursor | null = null;
  for (;;) {
    const rows = await table.nextBatch(after);
    const last = rows.at(-1);
    if (last === undefined) break;
    after = table.cursorOf(last);
    for (const row of rows) {
      const secret = table.plaintextOf(row);
      if (secret === null) {
        counts.unreadable++;
        continue;
      }
      const kind = table.isPlaintext(row) ? 'sealed' : 'resealed';
      if (await table.writeSealed(row, secret)) counts[kind]++;
    }
  }
  if (counts.sealed + counts.resealed > 0) {
    logger.info({ sealed: counts.sealed, resealed: counts.resealed, keyId: table.primaryKeyId }, `sealed ${table.secrets} under the current key`);
  }
  if (counts.unreadable > 0) {
    logger.error(
      { unreadable: counts.unreadable },
      `some ${table.secrets} name a key id missing from ${table.keyVariable}; keep the old key in the list until they are sealed again`,
    );
  }
  return counts;
}
