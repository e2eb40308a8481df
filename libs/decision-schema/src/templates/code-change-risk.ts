import { defineTemplate } from './template';

export const codeChangeRisk = defineTemplate({
  id: 'code-change-risk',
  name: 'Code change risk',
  description:
    'Assesses a pull request before merge: the riskiest area it touches, its blast radius, how well it is tested and how likely it is to cause a regression. Risky changes need a senior reviewer; dangerous migrations are held.',
  category: 'engineering',
  patterns: ['risk-scoring', 'gating', 'human-review'],
  schema: {
    state: {
      type: 'object',
      fields: {
        title: { type: 'string', required: true },
        description: { type: 'string' },
        diff_summary: { type: 'string', description: 'Summary or excerpt of the diff', required: true },
        files_changed: { type: 'integer', required: true },
        lines_changed: { type: 'integer' },
        paths: { type: 'array', description: 'Paths of the changed files' },
        has_tests: { type: 'boolean', description: 'Whether the change adds or updates tests' },
        author_tenure_days: { type: 'integer' },
      },
    },
    context: 'Monorepo of a payments company. Changes to auth, payments and database migrations need a senior reviewer. Deploys are continuous.',
    questions: [
      {
        key: 'risk_area',
        kind: 'choice',
        instructions: 'What is the riskiest area the change touches? Use `paths` and `diff_summary`.',
        options: [
          { value: 'auth_security', description: 'Authentication, authorization, secrets, crypto' },
          { value: 'data_migration', description: 'Schema or data migrations' },
          { value: 'payments', description: 'Money movement, ledgers, pricing' },
          { value: 'infrastructure', description: 'Deploy, network, scaling configuration' },
          { value: 'application_logic', description: 'Ordinary product code' },
          { value: 'ui_only', description: 'Styling, copy, front-end only' },
          { value: 'docs_tests', description: 'Documentation or tests only' },
        ],
      },
      {
        key: 'blast_radius',
        kind: 'score',
        instructions: 'If the change is wrong, how much breaks? Consider `files_changed` and `lines_changed`.',
        levels: [
          { label: 'contained', description: 'One feature, easy to roll back' },
          { label: 'moderate', description: 'Several features or one shared component' },
          { label: 'wide', description: 'Every request, every customer, or irreversible data changes' },
        ],
      },
      {
        key: 'test_coverage',
        kind: 'score',
        instructions: 'How well do the tests cover the change? Consider `has_tests`.',
        levels: ['none', 'partial', 'thorough'],
      },
      {
        key: 'regression',
        kind: 'probability',
        instructions: 'Judge the change as a reviewer would, from `title`, `description` and `diff_summary`.',
        criterion: 'Merging the change as is will cause a production regression.',
        threshold: 0.5,
        minConfidence: 0.2,
      },
    ],
    composites: [
      {
        key: 'change_risk',
        description: 'Overall merge risk',
        terms: [
          { question: 'regression', weight: 3 },
          { question: 'blast_radius', weight: 2 },
          { question: 'test_coverage', weight: -1 },
          { question: 'risk_area', option: 'data_migration', weight: 1 },
          { question: 'risk_area', option: 'payments', weight: 1 },
        ],
      },
    ],
    policies: [
      {
        when: { on: 'answer', question: 'risk_area', op: 'eq', value: 'data_migration' },
        and: [
          { on: 'answer', question: 'regression', op: 'gte', value: 0.5 },
          { on: 'answer', question: 'blast_radius', op: 'eq', value: 'wide' },
        ],
        action: 'block',
      },
      { when: { on: 'composite', composite: 'change_risk', op: 'gte', value: 0.5 }, action: 'escalate' },
      { when: { on: 'answer', question: 'risk_area', op: 'eq', value: 'auth_security' }, action: 'escalate' },
      {
        when: { on: 'answer', question: 'test_coverage', op: 'eq', value: 'none' },
        and: [{ on: 'score', question: 'blast_radius', op: 'gt', value: 1.5 }],
        action: 'escalate',
      },
    ],
    fallbackAction: 'escalate',
    settings: { timeoutMs: 12000, onEngineError: 'fallback', storeInput: true },
    destinations: [
      {
        key: 'request_senior_review',
        type: 'function',
        function: 'request_reviewers',
        when: [{ on: 'action', op: 'eq', value: 'escalate' }],
        params: { area: { from: 'result.risk_area', required: true }, level: { value: 'senior' } },
      },
      {
        key: 'merge_gate',
        type: 'http',
        description: 'Sets the merge-gate status on the pull request',
        url: 'https://ci.example.com/api/merge-gate',
        method: 'PUT',
        headers: { Accept: 'application/json' },
        params: { action: { from: 'action', required: true }, risk: { from: 'composites.change_risk' } },
        body: '{"state":"{{params.action}}","risk":{{params.risk}}}',
      },
    ],
  },
  sample_state: {
    title: 'Add NOT NULL constraint to payments.currency',
    description: 'Backfills missing currencies with EUR and adds the constraint.',
    diff_summary: "migration 0231: UPDATE payments SET currency = 'EUR' WHERE currency IS NULL; ALTER TABLE payments ALTER COLUMN currency SET NOT NULL;",
    files_changed: 2,
    lines_changed: 24,
    paths: ['db/migrations/0231_currency_not_null.sql', 'src/payments/model.ts'],
    has_tests: false,
    author_tenure_days: 40,
  },
});
