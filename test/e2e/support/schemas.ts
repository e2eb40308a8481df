// Decision schemas shared by the e2e tests and the bench; no test-framework globals here.

/** A small but complete decision: every question kind, a composite, policies and a fallback action. */
export function triageSchema(context = 'We sell refurbished phones.', overrides: Record<string, unknown> = {}) {
  return {
    state: { type: 'object', fields: { message: { type: 'string', required: true }, amount: { type: 'number' } } },
    context,
    questions: [
      {
        key: 'intent',
        kind: 'choice',
        instructions: 'What does the customer want? Read `message`.',
        options: [
          { value: 'refund', description: 'Wants the money back' },
          { value: 'exchange', description: null },
        ],
      },
      { key: 'urgency', kind: 'score', instructions: 'How upset is the customer?', levels: ['calm', 'annoyed', 'furious'] },
      { key: 'fraud', kind: 'probability', instructions: 'Judge the request.', criterion: 'The request shows signs of fraud' },
    ],
    composites: [
      {
        key: 'risk',
        terms: [
          { question: 'fraud', weight: 3 },
          { question: 'urgency', weight: 1 },
        ],
      },
    ],
    policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.9 }, action: 'block' }],
    fallbackAction: 'escalate',
    ...overrides,
  };
}
