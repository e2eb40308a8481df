import { defineTemplate } from './template';

export const refundApproval = defineTemplate({
  id: 'refund-approval',
  name: 'Refund approval',
  description:
    'Decides whether a refund request can be approved automatically, needs a person, or should be refused as likely abuse, weighing the refund policy against the order history.',
  category: 'commerce',
  patterns: ['approval', 'risk-scoring', 'human-review'],
  schema: {
    state: {
      type: 'object',
      fields: {
        reason: { type: 'string', description: 'The customer’s explanation', required: true },
        order_total: { type: 'number', description: 'Order value in the order currency', required: true },
        currency: { type: 'string', enum: ['usd', 'eur', 'brl', 'gbp'] },
        days_since_delivery: { type: 'integer', required: true },
        item_condition: { type: 'string', enum: ['unopened', 'opened', 'damaged', 'defective'] },
        customer_orders: { type: 'integer', description: 'Orders by this customer, this one included' },
        previous_refunds: { type: 'integer', description: 'Refunds granted to this customer in the last year' },
      },
    },
    context:
      'Refund policy: full refund within 30 days of delivery for unopened items; damaged or defective items are refunded within 90 days; opened items that work are not refunded after 14 days.',
    questions: [
      {
        key: 'refund_reason',
        kind: 'choice',
        instructions: 'Why does the customer want the money back? Read `reason` and `item_condition`.',
        options: [
          { value: 'damaged_in_transit', description: 'Arrived broken or with a damaged package' },
          { value: 'defective', description: 'Does not work or stopped working' },
          { value: 'not_as_described', description: 'Differs from the listing' },
          { value: 'changed_mind', description: 'No longer wants it' },
          { value: 'late_delivery', description: 'Arrived too late to be useful' },
          { value: 'never_arrived', description: 'Says it was never delivered' },
        ],
        minConfidence: 0.55,
      },
      {
        key: 'policy_fit',
        kind: 'score',
        instructions: 'How well does the request fit the refund policy in the context, given `days_since_delivery` and `item_condition`?',
        levels: [
          { label: 'outside_policy', description: 'The policy clearly does not cover it' },
          { label: 'borderline', description: 'Covered only under a generous reading' },
          { label: 'within_policy', description: 'The policy clearly covers it' },
        ],
      },
      {
        key: 'abuse',
        kind: 'probability',
        instructions: 'Compare `previous_refunds` with `customer_orders` and the story in `reason`.',
        criterion: 'The request looks like refund abuse: a pattern of refunds, an implausible story, or a claim that contradicts the order data.',
        threshold: 0.7,
      },
    ],
    composites: [
      {
        key: 'refund_risk',
        description: 'High when abuse is likely and the policy does not clearly cover the request',
        terms: [
          { question: 'abuse', weight: 3 },
          { question: 'policy_fit', weight: -2 },
          { question: 'refund_reason', option: 'changed_mind', weight: 1 },
        ],
      },
    ],
    policies: [
      { when: { on: 'answer', question: 'abuse', op: 'gte', value: 0.85 }, action: 'block' },
      { when: { on: 'composite', composite: 'refund_risk', op: 'gte', value: 0.3 }, action: 'escalate' },
      {
        when: { on: 'answer', question: 'policy_fit', op: 'eq', value: 'within_policy' },
        and: [{ on: 'answer', question: 'abuse', op: 'lt', value: 0.3 }],
        action: 'continue',
      },
      { when: { on: 'answer', question: 'policy_fit', op: 'eq', value: 'outside_policy' }, action: 'block' },
      { when: { on: 'score', question: 'policy_fit', op: 'lt', value: 2.5 }, action: 'escalate' },
    ],
    fallbackAction: 'escalate',
    settings: { timeoutMs: 6000, onEngineError: 'fallback' },
    destinations: [
      {
        key: 'issue_refund',
        type: 'function',
        function: 'issue_refund',
        when: [{ on: 'action', op: 'eq', value: 'continue' }],
        params: { amount: { from: 'state.order_total', required: true }, currency: { from: 'state.currency' } },
      },
      {
        key: 'review_queue',
        type: 'webhook',
        url: 'https://hooks.example.com/refunds/review',
        when: [{ on: 'action', op: 'eq', value: 'escalate' }],
      },
    ],
  },
  sample_state: {
    reason: 'The blender arrived with a cracked jar, the box was crushed on one side. Photos attached.',
    order_total: 89.9,
    currency: 'eur',
    days_since_delivery: 2,
    item_condition: 'damaged',
    customer_orders: 7,
    previous_refunds: 0,
  },
});
