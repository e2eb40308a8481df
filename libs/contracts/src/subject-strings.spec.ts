import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * A subject spelled out in a service bypasses its declared types and the permissions derived from the
 * declarations; every subject is declared in libs/contracts and referred to by name everywhere else.
 * Tests may spell subjects out (to publish a malformed notice, or to name a span).
 */
const ROOT = join(__dirname, '..', '..', '..');
const CONTRACTS = join(ROOT, 'libs', 'contracts');
const SUBJECT_LITERAL = /(['"`])v1\.[A-Za-z0-9_-]/;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || path === CONTRACTS ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !/\.(e2e-)?spec\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** `file:line` of every line in `text` holding a subject-shaped string literal. */
function subjectLiterals(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, index) => (SUBJECT_LITERAL.test(line) ? [`${relative(ROOT, file).split(sep).join('/')}:${index + 1}`] : []));
}

describe('subject strings', () => {
  it('recognises a subject literal in any quotes, and nothing else', () => {
    expect(subjectLiterals(join(ROOT, 'a.ts'), 'x(\'v1.billing-ledger.reserve\')\ny("v1.gateway.plan.changed")\nz(`v1.partner.${name}`)')).toEqual([
      'a.ts:1',
      'a.ts:2',
      'a.ts:3',
    ]);
    expect(subjectLiterals(join(ROOT, 'a.ts'), "get('v1/decisions')\nconst v1 = SUBJECTS.billing.reserve;\n'app/v1.json'")).toEqual([]);
  });

  it('are written only in libs/contracts', () => {
    const files = [...sourceFiles(join(ROOT, 'apps')), ...sourceFiles(join(ROOT, 'libs'))];
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((file) => subjectLiterals(file, readFileSync(file, 'utf8')));
    // On a failure: declare the subject in the owning service's file of libs/contracts and refer to it by name.
    expect(found).toEqual([]);
  });
});
