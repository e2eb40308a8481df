import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The decision-runner reaches its database only through its stores (`*.store.ts`) and migrations: SQL, TypeORM
 * repositories and the pg pool are nowhere else, so that each table's statements are found in one place and a
 * service reads as the rules it applies.
 */
const SOURCE = __dirname;

/** Calls that run a statement or reach TypeORM's data access directly. */
const DATA_ACCESS: ReadonlyArray<[string, RegExp]> = [
  ['query(', /\bquery\s*(<[^>]*>)?\s*\(/],
  ['getRepository(', /\bgetRepository\s*(<[^>]*>)?\s*\(/],
  ['createQueryBuilder(', /\bcreateQueryBuilder\s*(<[^>]*>)?\s*\(/],
  ['.manager.', /\.manager\./],
  ['pgPool(', /\bpgPool\s*\(/],
];

/** Where data access belongs. */
function mayAccessData(path: string): boolean {
  return path.endsWith('.store.ts') || path.startsWith('migrations/') || path === 'pg-pool.ts' || /\.(spec|e2e-spec)\.ts$/.test(path);
}

/** The data-access calls in a source text, each named once. */
export function dataAccessIn(source: string): string[] {
  return DATA_ACCESS.filter(([, pattern]) => pattern.test(source)).map(([name]) => name);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SOURCE, path)] : [];
  });
}

describe('data access in the decision-runner', () => {
  it('recognizes each kind of direct data access', () => {
    expect(dataAccessIn('await this.db.query(`SELECT 1`)')).toEqual(['query(']);
    expect(dataAccessIn('const { rows } = await client.query<{ id: string }>({ ...FIND, values })')).toEqual(['query(']);
    expect(dataAccessIn('tx.getRepository(DecisionEntity).findOneBy({ id })')).toEqual(['getRepository(']);
    expect(dataAccessIn("repository.createQueryBuilder('e')")).toEqual(['createQueryBuilder(']);
    expect(dataAccessIn('this.db.manager.save(row)')).toEqual(['.manager.']);
    expect(dataAccessIn('await pgPool(this.db).connect()')).toEqual(['pgPool(']);
    expect(dataAccessIn('const decision = await this.decisions.require(request); const query = checkReplaySelectionQuery(request.query);')).toEqual([]);
  });

  it('happens only in stores and migrations', () => {
    const files = sourceFiles(SOURCE);
    expect(files).toContain('decisions/decision.store.ts');
    const offenders = files
      .filter((path) => !mayAccessData(path))
      .map((path) => ({ path, calls: dataAccessIn(readFileSync(join(SOURCE, path), 'utf8')) }))
      .filter(({ calls }) => calls.length > 0);
    expect(offenders).toEqual([]);
  });
});
