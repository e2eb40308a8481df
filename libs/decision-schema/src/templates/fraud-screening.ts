import { defineTemplate } from './template';

export const fraudScreening = defineTemplate({
  id: 'fraud-screening',
  name: 'Payment fraud screening',
  description:
    'Screens a checkout before capture: how likely it is fraudulent, which fraud pattern it resembles and how unusual its velocity is. Blocks clear fraud, sends grey cases to an analyst.',
  category: 'risk',
  patterns: ['risk-scoring', 'gating', 'human-review'],
  schema: {
    state: {
      type: 'object',
      fields: {
        amount: { type: 'number', description: 'Order amount in USD', required: true },
        country: { type: 'string', description: 'Billing country, ISO 3166-1 alpha-2', required: true },
        ip_country: { type: 'string', description: 'Country of the buyer’s IP address' },
        account_age_days: { type: 'integer', description: 'Days since the account was created' },
        payment_method: { type: 'string', enum: ['card', 'bank_transfer', 'wallet', 'crypto'], required: true },
        shipping_matches_billing: { type: 'boolean' },
        recent_orders: { type: 'array', description: 'Orders of the last 24 hours: amount, card last 4, status' },
        device: { type: 'object', description: 'Device fingerprint: browser, OS, seen_before' },
      },
    },
    context: 'Online electronics store shipping to the EU and Latin America. Chargebacks above 0.9% put our card processing at risk.',
    questions: [
      {
        key: 'fraud',
        kind: 'probability',
        instructions: 'Weigh `amount`, `country` against `ip_country`, `account_age_days`, `shipping_matches_billing`, `recent_orders` and `device`.',
        criterion: 'The order is being placed without the authorization of the payment method’s owner.',
        threshold: 0.8,
        minConfidence: 0.3,
      },
      {
        key: 'fraud_pattern',
        kind: 'choice',
        instructions: 'Which known pattern does the order resemble most? Answer none when it looks like an ordinary purchase.',
        options: [
          { value: 'none', description: 'An ordinary purchase' },
          { value: 'card_testing', description: 'Many small attempts with different cards' },
          { value: 'account_takeover', description: 'An old account suddenly changes device, address or habits' },
          { value: 'triangulation', description: 'Shipping to a third party unrelated to the buyer' },
          { value: 'friendly_fraud', description: 'A real customer likely to dispute a legitimate charge' },
        ],
      },
      {
        key: 'velocity',
        kind: 'score',
        instructions: { task: 'Rate how unusual the order velocity is', look_at: ['recent_orders', 'account_age_days'] },
        levels: [
          { rubric: { orders_24h: '0-2', distinct_cards: 1, meaning: 'normal' } },
          { rubric: { orders_24h: '3-5', distinct_cards: '1-2', meaning: 'elevated' } },
          { rubric: { orders_24h: '6+', distinct_cards: '3+', meaning: 'abnormal' } },
        ],
      },
    ],
    composites: [
      {
        key: 'risk',
        description: 'Overall fraud risk used to route grey cases',
        terms: [
          { question: 'fraud', weight: 3 },
          { question: 'velocity', weight: 1 },
          { question: 'fraud_pattern', option: 'account_takeover', weight: 1 },
          { question: 'fraud_pattern', option: 'none', weight: -1 },
        ],
      },
    ],
    policies: [
      {
        when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.9 },
        and: [{ on: 'confidence', question: 'fraud', op: 'gte', value: 0.6 }],
        action: 'block',
      },
      { when: { on: 'answer', question: 'fraud_pattern', op: 'eq', value: 'card_testing' }, action: 'block' },
      { when: { on: 'answer', question: 'velocity', op: 'eq', value: '3' }, action: 'escalate' },
      { when: { on: 'composite', composite: 'risk', op: 'gte', value: 0.45 }, action: 'escalate' },
    ],
    fallbackAction: 'escalate',
    settings: { timeoutMs: 3000, onEngineError: 'fallback', storeInput: true },
    destinations: [
      {
        key: 'analyst_queue',
        type: 'http',
        description: 'Opens a case in the fraud analysts’ tool',
        url: 'https://risk.example.com/api/cases',
        method: 'POST',
        headers: { 'X-Source': 'decision-service' },
        when: [{ on: 'action', op: 'eq', value: 'escalate' }],
        params: {
          execution: { from: 'execution_id', required: true },
          risk: { from: 'composites.risk' },
          fraud: { from: 'result.fraud' },
        },
        body: '{"execution":"{{params.execution}}","risk":{{params.risk}},"fraud":{{params.fraud}}}',
      },
      {
        key: 'high_fraud_alert',
        type: 'webhook',
        url: 'https://hooks.example.com/risk/alerts',
        when: [{ on: 'answer', question: 'fraud', op: 'gte', value: 'threshold' }],
      },
    ],
  },
  sample_state: {
    amount: 1899,
    country: 'PT',
    ip_country: 'NG',
    account_age_days: 1,
    payment_method: 'card',
    shipping_matches_billing: false,
    recent_orders: [
      { amount: 1.5, card_last4: '4242', status: 'declined' },
      { amount: 2, card_last4: '1881', status: 'declined' },
    ],
    device: { browser: 'Chrome 124', os: 'Windows', seen_before: false },
  },
});
