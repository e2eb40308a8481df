import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * SQL and TypeORM calls of the billing-ledger live in its stores (`*.store.ts`) and migrations, so that a
 * service reads as locks, loads, rules and saves (a JetStream manager's calls are not storage calls).
 */
const SOURCE = __dirname;
/** A query (TypeORM's or pg's), a repository, a query builder, or an entity manager's own reads and writes. */
const STORAGE_CALL =
  /\bquery\s*[<(]|\bgetRepository\s*\(|\bcreateQueryBuilder\s*\(|\.manager\.(?:query|find\w*|insert|update|upsert|save|delete|remove|exists\w*|count\w*|increment|decrement)\b/;

/** Source files under `directory`, relative to the source root, without specs, stores and migrations. */
function sourceFiles(directory = ''): string[] {
  return readdirSync(join(SOURCE, directory), { withFileTypes: true })
    .flatMap((entry) => {
      const path = directory ? `${directory}/${entry.name}` : entry.name;
      if (entry.isDirectory()) return path === 'migrations' ? [] : sourceFiles(path);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.store.ts') ? [path] : [];
    })
    .sort();
}

function callsStorage(file: string): boolean {
  return readFileSync(join(SOURCE, file), 'utf8')
    .split('\n')
    .some((line) => STORAGE_CALL.test(line));
}

describe('storage calls in the billing-ledger', () => {
  it('recognises a query, a repository, a query builder or a reach into an entity manager, and nothing else', () => {
    for (const line of [
      'await manager.query(`SELECT 1`)',
      'this.pool.query<{ id: string }>({',
      'db.getRepository(LeaseEntity)',
      'x.manager.find(A)',
      'this.manager.insert(LeaseEntity, lease)',
      'manager.createQueryBuilder()',
    ]) {
      expect(STORAGE_CALL.test(line)).toBe(true);
    }
    for (const line of [
      'const leases = new LeaseStore(this.db.manager);',
      'await this.manager.streams.info(SETTLEMENT_STREAM.name)',
      'queryTimeoutMs: 5',
      'a query is a question',
    ]) {
      expect(STORAGE_CALL.test(line)).toBe(false);
    }
  });

  it('are made only in stores and migrations', () => {
    const files = sourceFiles();
    expect(files).toEqual(expect.arrayContaining(['leases.service.ts', 'fast-reserve.ts']));
    expect(files.filter(callsStorage)).toEqual([]);
  });
});
