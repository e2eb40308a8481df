import { defineTemplate } from './template';

export const churnRisk = defineTemplate({
  id: 'churn-risk',
  name: 'Churn risk review',
  description:
    'Reads an account’s recent activity (usage changes, tickets, billing events) and judges how likely it is to churn and why. At-risk accounts go to their customer success manager with a drafted outreach email.',
  category: 'customer-success',
  patterns: ['risk-scoring', 'classification', 'human-review'],
  schema: {
    state: { type: 'list', items: 'object' },
    context:
      'B2B analytics product sold on annual contracts. Each state item is one event of the last 60 days: {type, date, details}. Types include usage_change, ticket, billing, login_summary, nps.',
    questions: [
      {
        key: 'churn',
        kind: 'probability',
        instructions: 'Read every event in order and judge the account as a whole.',
        criterion: 'The account will cancel or not renew at its next renewal date.',
        threshold: 0.6,
        minConfidence: 0.2,
      },
      {
        key: 'driver',
        kind: 'choice',
        instructions: 'What is the main reason the account might leave?',
        options: [
          { value: 'price', description: 'Complains about cost or asks for discounts' },
          { value: 'missing_feature', description: 'Needs something the product lacks' },
          { value: 'poor_support', description: 'Unresolved tickets or slow answers' },
          { value: 'low_adoption', description: 'Few active users, usage falling' },
          { value: 'competitor', description: 'Evaluating or mentions a competitor' },
          { value: 'business_change', description: 'Layoffs, merger, budget freeze' },
          { value: 'no_risk', description: 'No sign of risk' },
        ],
      },
      {
        key: 'health',
        kind: 'score',
        instructions: 'Overall account health, from adoption and sentiment.',
        levels: ['critical', 'at_risk', 'neutral', 'healthy', 'thriving'],
      },
    ],
    composites: [
      {
        key: 'churn_index',
        description: 'Ranks accounts for customer success outreach',
        terms: [
          { question: 'churn', weight: 3 },
          { question: 'health', weight: -2 },
          { question: 'driver', option: 'competitor', weight: 1 },
        ],
      },
    ],
    policies: [
      { when: { on: 'answer', question: 'churn', op: 'gte', value: 0.75 }, action: 'escalate' },
      { when: { on: 'composite', composite: 'churn_index', op: 'gte', value: 0.2 }, action: 'escalate' },
      { when: { on: 'answer', question: 'health', op: 'eq', value: 'critical' }, action: 'escalate' },
    ],
    fallbackAction: 'continue',
    settings: { timeoutMs: 15000, onEngineError: 'error', storeOutput: true },
    destinations: [
      {
        key: 'draft_outreach',
        type: 'llm',
        description: 'Drafts an email for the customer success manager to send',
        when: [{ on: 'action', op: 'eq', value: 'escalate' }],
        params: { driver: { from: 'result.driver', required: true }, events: { from: 'state' } },
        prompt:
          'You are a customer success manager. Write a short, warm email (under 120 words) to re-engage an account whose main churn driver is {{params.driver}}. Offer a call. Do not mention churn or risk.',
        input: 'Recent account events: {{params.events}}',
        maxTokens: 400,
        temperature: 0.5,
      },
      {
        key: 'csm_task',
        type: 'webhook',
        url: 'https://hooks.example.com/cs/at-risk',
        when: [{ on: 'action', op: 'eq', value: 'escalate' }],
      },
    ],
  },
  sample_state: [
    { type: 'usage_change', date: '2024-05-02', details: 'Weekly active users fell from 42 to 17' },
    { type: 'ticket', date: '2024-05-09', details: 'Export to BigQuery has failed for 3 weeks; still open' },
    { type: 'nps', date: '2024-05-12', details: 'Score 4: "the tool used to be great, now we spend more time fixing exports"' },
    { type: 'billing', date: '2024-05-20', details: 'Asked for the cancellation terms of the annual contract' },
  ],
});
