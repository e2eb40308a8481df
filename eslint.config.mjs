// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import local from './eslint-rules/no-import-cycle.cjs';

const APPS = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner', 'all-in-one'];

/** Relative imports that reach into another app's folder, whatever the depth. */
const intoApp = (app) => [`**/${app}/src/**`, `**/${app}/src`, `**/apps/${app}/**`];

const librariesNeverImportApps = { group: ['**/apps/**', ...APPS.flatMap(intoApp)], message: 'Libraries never import apps.' };

/**
 * The architecture in lint form: apps never import one another (they talk over NATS), and libraries
 * never import apps. Libraries are reached only through their `@ds/*` names.
 */
const boundaries = [
  ...APPS.map((app) => ({
    files: [`apps/${app}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: APPS.filter((other) => other !== app).flatMap(intoApp),
              message: 'Apps never import other apps: send a NATS message through @ds/contracts.',
            },
            { group: ['**/libs/**'], message: 'Import libraries by their @ds/* name.' },
          ],
        },
      ],
    },
  })),
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [librariesNeverImportApps] }],
    },
  },
];

/**
 * Pure libraries hold logic with no I/O, so that every service, the web application and fast unit tests can
 * use them: no service runtime, no database, broker or Redis client, no Node module that touches files, sockets
 * or processes (`node:crypto` is allowed). Among the `@ds/*` libraries they import only one another. Each block
 * repeats the libraries' apps rule because a later `no-restricted-imports` replaces an earlier one for the same
 * files.
 */
const PURE_LIBRARIES = ['decision-schema', 'engine', 'billing', 'ids', 'contracts', 'webhooks', 'partner', 'openapi', 'sealing'];
const NODE_IO_MODULES = [
  'fs',
  'fs/promises',
  'net',
  'tls',
  'http',
  'https',
  'http2',
  'child_process',
  'cluster',
  'dgram',
  'dns',
  'dns/promises',
  'worker_threads',
  'readline',
  'repl',
  'inspector',
  'os',
  'v8',
];
const IO_PACKAGES = ['typeorm', '@nestjs/[^/]+', 'pg', 'nats', 'ioredis'];
/**
 * The `@ds/*` libraries a pure library may import, when narrower than every other pure library: the sealing code
 * stands on `node:crypto` alone, so that what guards secrets at rest can be read in one place.
 * @type {Record<string, string[]>}
 */
const PURE_LIBRARY_IMPORTS = { sealing: [] };
const pureImportsOf = (library) => PURE_LIBRARY_IMPORTS[library] ?? PURE_LIBRARIES.filter((other) => other !== library);

const pureLayers = PURE_LIBRARIES.map((library) => ({
  files: [`libs/${library}/**/*.ts`],
  // A library's tests may read fixtures or scan the repository; the rule is about what the library runs.
  ignores: ['**/*.spec.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: NODE_IO_MODULES.flatMap((name) => [name, `node:${name}`]).map((name) => ({
          name,
          message: `@ds/${library} is a pure library: no file, network or process I/O (node:crypto is fine).`,
        })),
        patterns: [
          librariesNeverImportApps,
          {
            regex: `^(${IO_PACKAGES.join('|')})(/.*)?$`,
            message: `@ds/${library} is a pure library: no service runtime, database, NATS or Redis; that code belongs in @ds/platform or an app.`,
          },
          pureImportsOf(library).length === 0
            ? { regex: '^@ds/', message: `@ds/${library} imports no other @ds/* library, only its own files by relative paths.` }
            : {
                regex: `^@ds/(?!(${pureImportsOf(library).join('|')})(/|$))`,
                message: `@ds/${library} imports only the other pure libraries (${pureImportsOf(library)
                  .map((other) => `@ds/${other}`)
                  .join(', ')}), and its own files by relative paths.`,
              },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', 'helm/**', 'deploy/**', 'docker/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // A promise nobody awaits, or one handed where a callback's result is ignored, loses its rejection: only
    // the types tell a promise apart, so these rules read each file's nearest tsconfig.json (apps/web has its own).
    files: ['**/*.ts', '**/*.tsx', '**/*.mts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // A circle of imports, type-only ones too, is one idea spread over files that cannot be read one at a time.
    files: ['**/*.ts', '**/*.tsx', '**/*.mts'],
    plugins: { local },
    rules: { 'local/no-import-cycle': 'error' },
  },
  ...boundaries,
  ...pureLayers,
);
