// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const APPS = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner', 'all-in-one'];

/** Relative imports that reach into another app's folder, whatever the depth. */
const intoApp = (app) => [`**/${app}/src/**`, `**/${app}/src`, `**/apps/${app}/**`];

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
            { group: APPS.filter((other) => other !== app).flatMap(intoApp), message: 'Apps never import other apps: send a NATS message through @ds/contracts.' },
            { group: ['**/libs/**'], message: 'Import libraries by their @ds/* name.' },
          ],
        },
      ],
    },
  })),
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/apps/**', ...APPS.flatMap(intoApp)], message: 'Libraries never import apps.' },
          ],
        },
      ],
    },
  },
];

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
  { files: ['**/*.js', '**/*.mjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' } }, rules: { '@typescript-eslint/no-require-imports': 'off' } },
  ...boundaries,
);
