import { defineTemplate } from './template';

export const supportTriage = defineTemplate({
  id: 'support-triage',
  name: 'Support ticket triage',
  description:
    'Reads an incoming support message, names what the customer needs and how urgent it is, and routes it: an instant answer for how-to questions, a person for angry or critical cases.',
  category: 'support',
  patterns: ['classification', 'routing', 'auto-reply', 'human-review'],
  schema: {
    state: {
      type: 'object',
      fields: {
        message: { type: 'string', description: 'What the customer wrote', required: true },
        subject: { type: 'string', description: 'Subject line of the ticket' },
        channel: { type: 'string', enum: ['email', 'chat', 'phone', 'social'] },
        plan: { type: 'string', description: 'Subscription plan of the customer', enum: ['free', 'pro', 'enterprise'] },
        customer: { type: 'object', description: 'Customer record: name, email, signup date' },
        previous_tickets: { type: 'integer', description: 'Tickets opened in the last 90 days' },
      },
    },
    context: 'We sell a project-management SaaS. Support answers in English, Portuguese and Spanish. Enterprise customers have a 1-hour response target.',
    questions: [
      {
        key: 'intent',
        kind: 'choice',
        instructions: 'What does the customer need? Read `subject` and `message`; pick the single main need.',
        options: [
          { value: 'billing', description: 'Invoices, charges, refunds, payment methods' },
          { value: 'bug_report', description: 'Something in the product does not work as documented' },
          { value: 'how_to', description: 'Asks how to do something the product already supports' },
          { value: 'account_access', description: 'Cannot sign in, lost 2FA, locked account' },
          { value: 'feature_request', description: 'Asks for something the product does not do' },
          { value: 'cancellation', description: 'Wants to cancel or downgrade' },
        ],
        minConfidence: 0.5,
      },
      {
        key: 'urgency',
        kind: 'score',
        instructions: 'How soon must we act? Consider `plan` and whether work is blocked.',
        levels: [
          { label: 'low', description: 'No impact on work; a question or an idea' },
          { label: 'normal', description: 'Inconvenient, a workaround exists' },
          { label: 'high', description: 'Blocks one person or one workflow' },
          { label: 'critical', description: 'Blocks a whole team, data loss, or a security problem' },
        ],
      },
      {
        key: 'frustration',
        kind: 'score',
        instructions: 'How upset is the customer, judging only by the tone of `message`?',
        levels: ['calm', 'annoyed', 'angry'],
      },
      {
        key: 'churn_signal',
        kind: 'probability',
        instructions: 'Judge whether the message shows the customer may leave. Consider `previous_tickets` as a sign of accumulated frustration.',
        criterion: 'The customer says or clearly implies that they will cancel, switch to a competitor or stop paying.',
        threshold: 0.7,
      },
    ],
    composites: [
      {
        key: 'priority',
        description: 'How fast a person should pick this up',
        terms: [
          { question: 'urgency', weight: 3 },
          { question: 'frustration', weight: 1 },
          { question: 'churn_signal', weight: 2 },
        ],
      },
    ],
    policies: [
      { when: { on: 'composite', composite: 'priority', op: 'gte', value: 0.75 }, action: 'escalate' },
      {
        when: { on: 'answer', question: 'intent', op: 'eq', value: 'account_access' },
        and: [{ on: 'answer', question: 'urgency', op: 'eq', value: 'critical' }],
        action: 'escalate',
      },
      {
        when: { on: 'answer', question: 'intent', op: 'eq', value: 'how_to' },
        and: [{ on: 'confidence', question: 'intent', op: 'gte', value: 0.8 }],
        action: 'continue',
      },
    ],
    fallbackAction: 'escalate',
    settings: { timeoutMs: 5000, onEngineError: 'fallback', storeInput: false, storeOutput: true },
    destinations: [
      {
        key: 'how_to_reply',
        type: 'reply',
        description: 'Instant answer while the ticket waits in the self-service queue',
        when: [
          { on: 'answer', question: 'intent', op: 'eq', value: 'how_to' },
          { on: 'action', op: 'eq', value: 'continue' },
        ],
        text: 'Hi {{params.name}}, thanks for reaching out! Our help center has a step-by-step guide for this; a teammate will follow up if it does not solve it.',
        buttons: ['Open the help center', 'Talk to a person'],
        params: { name: { from: 'state.customer.name' } },
      },
      {
        key: 'route_ticket',
        type: 'function',
        description: 'Puts the ticket in the queue of its intent',
        function: 'route_ticket',
        params: {
          queue: { from: 'result.intent', required: true },
          priority: { from: 'composites.priority' },
          escalated: { from: 'action' },
        },
      },
      {
        key: 'on_call',
        type: 'webhook',
        description: 'Pages the support lead for escalated tickets',
        url: 'https://hooks.example.com/support/escalations',
        when: [{ on: 'action', op: 'eq', value: 'escalate' }],
      },
    ],
  },
  sample_state: {
    message: 'Since this morning none of my team can open the Q3 board, we get a blank page. We have a client demo in two hours!',
    subject: 'Board not loading - urgent',
    channel: 'email',
    plan: 'enterprise',
    customer: { name: 'Ana Souza', email: 'ana@example.com' },
    previous_tickets: 1,
  },
});
