import { defineTemplate } from './template';

export const leadQualification = defineTemplate({
  id: 'lead-qualification',
  name: 'Inbound lead qualification',
  description:
    'Qualifies an inbound sales lead from its form answers: fit with the ideal customer, buying intent and budget signals. Hot leads go straight to a sales rep, the rest to nurturing.',
  category: 'sales',
  patterns: ['risk-scoring', 'routing', 'classification'],
  schema: {
    state: {
      type: 'object',
      fields: {
        message: { type: 'string', description: 'What the lead wrote in the contact form', required: true },
        company: { type: 'string' },
        role: { type: 'string', description: 'Job title of the contact' },
        employees: { type: 'integer', description: 'Company size' },
        source: { type: 'string', enum: ['website', 'referral', 'event', 'outbound'] },
        country: { type: 'string' },
        email: { type: 'string' },
      },
    },
    context:
      'We sell an API for automated decisions. Ideal customers: software companies of 50 to 5,000 employees with an engineering team, in support, risk or operations use cases.',
    questions: [
      {
        key: 'fit',
        kind: 'score',
        instructions: 'How well does the company match our ideal customer? Use `company`, `employees`, `role` and `country`.',
        levels: [
          { label: 'poor', description: 'Outside our market' },
          { label: 'weak', description: 'Could use us, but far from the ideal profile' },
          { label: 'good', description: 'Matches most of the profile' },
          { label: 'excellent', description: 'Textbook ideal customer' },
        ],
      },
      {
        key: 'use_case',
        kind: 'choice',
        instructions: 'What would they use the product for, according to `message`?',
        options: [
          { value: 'support_automation', description: 'Triage and routing of support tickets' },
          { value: 'fraud_and_risk', description: 'Screening payments, sign-ups or content' },
          { value: 'sales_ops', description: 'Scoring and routing leads or deals' },
          { value: 'internal_tools', description: 'Approvals and workflows inside the company' },
          { value: 'just_researching', description: 'Student, journalist, competitor or no concrete project' },
        ],
      },
      {
        key: 'buying_intent',
        kind: 'probability',
        instructions: 'Judge the urgency and concreteness of `message`.',
        criterion: 'The lead has a concrete project and wants to buy within the next three months.',
        threshold: 0.6,
      },
      {
        key: 'budget_signal',
        kind: 'probability',
        instructions: 'Look for mentions of budget, current vendors, volumes or procurement in `message`.',
        criterion: 'The lead has, or clearly can get, budget for a paid plan.',
      },
    ],
    composites: [
      {
        key: 'lead_score',
        description: 'Priority for the sales team',
        terms: [
          { question: 'fit', weight: 2 },
          { question: 'buying_intent', weight: 2 },
          { question: 'budget_signal', weight: 1 },
          { question: 'use_case', option: 'just_researching', weight: -2 },
        ],
      },
    ],
    policies: [
      { when: { on: 'answer', question: 'use_case', op: 'eq', value: 'just_researching' }, action: 'continue' },
      { when: { on: 'composite', composite: 'lead_score', op: 'gte', value: 0.55 }, action: 'escalate' },
      {
        when: { on: 'answer', question: 'fit', op: 'eq', value: 'excellent' },
        and: [{ on: 'answer', question: 'buying_intent', op: 'gte', value: 0.4 }],
        action: 'escalate',
      },
    ],
    fallbackAction: 'continue',
    settings: { timeoutMs: 8000, onEngineError: 'error', storeInput: true },
    destinations: [
      {
        key: 'create_lead',
        type: 'function',
        function: 'crm.createLead',
        params: {
          email: { from: 'state.email', required: true },
          score: { from: 'composites.lead_score' },
          use_case: { from: 'result.use_case' },
          owner: { value: 'inbound-team' },
        },
      },
      {
        key: 'notify_sales',
        type: 'http',
        url: 'https://crm.example.com/api/alerts',
        when: [{ on: 'action', op: 'eq', value: 'escalate' }],
        headers: { 'X-Team': 'sales' },
        params: { company: { from: 'state.company' }, decision: { from: 'decision_id' } },
        body: '{"text":"Hot lead: {{params.company}}","decision":"{{params.decision}}"}',
      },
    ],
  },
  sample_state: {
    message: 'We route ~40k support tickets a month with a rules engine that keeps breaking. Looking to replace it this quarter; budget approved.',
    company: 'Nimbus Logistics',
    role: 'Head of Support Engineering',
    employees: 800,
    source: 'website',
    country: 'DE',
    email: 'lena@nimbus.example',
  },
});
