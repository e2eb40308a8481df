import { Linter, Rule } from 'eslint';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import tseslint from 'typescript-eslint';

// The rule is plain CommonJS JavaScript, the file eslint.config.mjs loads.
const { noImportCycle } = createRequire(__filename)('../../eslint-rules/no-import-cycle.cjs') as { noImportCycle: Rule.RuleModule };

const ROOT = resolve(__dirname, '../..');

/** Lints `file` (absolute, under `cwd`) as `npm run lint` does with the rule, returning its messages. */
function lint(cwd: string, file: string, text: string): Linter.LintMessage[] {
  const linter = new Linter({ configType: 'flat', cwd });
  return linter.verify(
    text,
    [
      {
        files: ['**/*.ts', '**/*.tsx'],
        languageOptions: { parser: tseslint.parser as Linter.Parser },
        plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
        rules: { 'local/no-import-cycle': 'error' },
      },
    ],
    { filename: file },
  );
}

/** A throwaway repository: a package.json, a tsconfig.json with `paths`, and the given files. */
function repository(files: Record<string, string>): { dir: string; lintFile: (name: string) => Linter.LintMessage[] } {
  const dir = mkdtempSync(join(tmpdir(), 'import-cycle-'));
  const all: Record<string, string> = {
    'package.json': '{}',
    'tsconfig.json': JSON.stringify({ compilerOptions: { paths: { '@fx/shared': ['./libs/shared/src/index.ts'] } } }),
    ...files,
  };
  for (const [name, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return { dir, lintFile: (name) => lint(dir, join(dir, name), all[name]!) };
}

describe('local/no-import-cycle', () => {
  const made: string[] = [];
  afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const repo = (files: Record<string, string>) => {
    const built = repository(files);
    made.push(built.dir);
    return built.lintFile;
  };

  it('names a circle of type-only imports from each file on it, and nothing for a file that only leads into it', () => {
    const lintFile = repo({
      'src/a.ts': "import type { B } from './b';\nexport interface A { b: B }\n",
      'src/b.ts': "import type { C } from './c';\nexport interface B { c: C }\n",
      'src/c.ts': "export type { A as C } from './a';\n",
      'src/d.ts': "import type { A } from './a';\nexport type D = A;\n",
    });
    const a = lintFile('src/a.ts');
    expect(a).toHaveLength(1);
    expect(a[0]).toMatchObject({ ruleId: 'local/no-import-cycle', line: 1 });
    expect(a[0]!.message).toContain('src/a.ts → src/b.ts → src/c.ts → src/a.ts');
    expect(lintFile('src/c.ts')[0]!.message).toContain('src/c.ts → src/a.ts → src/b.ts → src/c.ts');
    expect(lintFile('src/d.ts')).toEqual([]);
  });

  it('sees a file as its text is now, as an editor lints while one types', () => {
    const files = {
      'src/a.ts': "import { b } from './b';\nexport const a = b;\n",
      'src/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
    };
    const built = repository(files);
    made.push(built.dir);
    expect(built.lintFile('src/a.ts')).toHaveLength(1);
    // b.ts edited (not saved): it no longer imports a.ts, and the circle is gone for both.
    expect(lint(built.dir, join(built.dir, 'src/b.ts'), 'export const b = () => 1;\n')).toEqual([]);
    expect(built.lintFile('src/a.ts')).toEqual([]);
  });

  it('lets import() lead back: a screen loaded by route is meant to be reached that way', () => {
    const lintFile = repo({
      'src/app.tsx': "import { shell } from './shell';\nexport const app = () => import('./screen').then((m) => m.screen + shell);\n",
      'src/shell.ts': "export const shell = 'shell';\n",
      'src/screen.tsx': "import { app } from './app';\nexport const screen = String(app);\n",
    });
    expect(lintFile('src/app.tsx')).toEqual([]);
    // The static side of the same pair is still a circle only if it closes statically, which it does not here.
    expect(lintFile('src/screen.tsx')).toEqual([]);
  });

  it('follows the tsconfig paths, so a circle between libraries is found', () => {
    const lintFile = repo({
      'libs/shared/src/index.ts': "export { helper } from './helper';\n",
      'libs/shared/src/helper.ts': "import { used } from '../../../apps/one/main';\nexport const helper = used;\n",
      'apps/one/main.ts': "import { helper } from '@fx/shared';\nexport const used = 1;\nexport const again = helper;\n",
    });
    expect(lintFile('apps/one/main.ts')[0]!.message).toContain('apps/one/main.ts → libs/shared/src/index.ts → libs/shared/src/helper.ts → apps/one/main.ts');
  });

  it('finds no circle in the schema types, the calibration they store, or the platform configuration', () => {
    for (const file of ['libs/decision-schema/src/schema-types.ts', 'libs/decision-schema/src/quality/calibration.ts', 'libs/platform/src/config.ts']) {
      const path = join(ROOT, file);
      expect(lint(ROOT, path, readFileSync(path, 'utf8'))).toEqual([]);
    }
  });
});
