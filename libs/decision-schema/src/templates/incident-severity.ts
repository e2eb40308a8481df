import { defineTemplate } from './template';

export const incidentSeverity = defineTemplate({
  id: 'incident-severity',
  name: 'Incident severity',
  description:
    'Grades a new production incident from its alert and first report: severity, kind and customer impact. Pages the on-call engineer for SEV1 and SEV2, security incidents go to the security team.',
  category: 'operations',
  patterns: ['classification', 'routing', 'human-review'],
  schema: {
    state: {
      type: 'object',
      fields: {
        title: { type: 'string', required: true },
        description: { type: 'string', description: 'First report or alert text', required: true },
        service: { type: 'string', description: 'Affected service' },
        error_rate: { type: 'number', description: 'Share of failing requests, 0 to 1' },
        affected_customers: { type: 'integer' },
        region: { type: 'string' },
        alerts: { type: 'array', description: 'Related alerts that fired in the last 30 minutes' },
      },
    },
    context:
      'SEV1: full outage or data loss for many customers. SEV2: major feature down or severe degradation. SEV3: partial degradation with a workaround. SEV4: cosmetic or internal only.',
    questions: [
      {
        key: 'severity',
        kind: 'score',
        instructions: 'Grade the incident using the severity definitions in the context. Consider `error_rate`, `affected_customers` and `alerts`.',
        levels: [
          { label: 'sev4', description: 'Cosmetic or internal only' },
          { label: 'sev3', description: 'Partial degradation with a workaround' },
          { label: 'sev2', description: 'Major feature down or severe degradation' },
          { label: 'sev1', description: 'Full outage or data loss for many customers' },
        ],
        minConfidence: 0.35,
      },
      {
        key: 'incident_type',
        kind: 'choice',
        instructions: 'What kind of incident is it? Read `title` and `description`.',
        options: [
          { value: 'outage', description: 'The `service` does not answer' },
          { value: 'degradation', description: 'Slow or partly failing' },
          { value: 'data_issue', description: 'Wrong, missing or corrupted data' },
          { value: 'security', description: 'Breach, leaked secret, abuse or attack' },
          { value: 'third_party', description: 'A provider we depend on is failing' },
        ],
      },
      {
        key: 'customer_impact',
        kind: 'probability',
        instructions: 'Judge from `affected_customers`, `region` and `description`.',
        criterion: 'Customers notice the problem right now.',
        threshold: 0.5,
      },
    ],
    composites: [
      {
        key: 'urgency',
        terms: [
          { question: 'severity', weight: 3 },
          { question: 'customer_impact', weight: 2 },
          { question: 'incident_type', option: 'security', weight: 2 },
        ],
      },
    ],
    policies: [
      { when: { on: 'answer', question: 'incident_type', op: 'eq', value: 'security' }, action: 'escalate' },
      { when: { on: 'answer', question: 'severity', op: 'eq', value: 'sev1' }, action: 'escalate' },
      { when: { on: 'score', question: 'severity', op: 'gte', value: 2.6 }, action: 'escalate' },
      { when: { on: 'composite', composite: 'urgency', op: 'gte', value: 0.7 }, action: 'escalate' },
    ],
    fallbackAction: 'escalate',
    settings: { timeoutMs: 4000, onEngineError: 'fallback' },
    destinations: [
      {
        key: 'page_on_call',
        type: 'webhook',
        description: 'Pages the on-call engineer',
        url: 'https://hooks.example.com/pager/incidents',
        when: [{ on: 'action', op: 'eq', value: 'escalate' }],
      },
      {
        key: 'security_team',
        type: 'agent',
        description: 'Hands security incidents to the security triage agent',
        url: 'https://agents.example.com/security-triage',
        mode: 'async',
        when: [{ on: 'answer', question: 'incident_type', op: 'eq', value: 'security' }],
        instructions: 'Open a security incident for {{params.title}} and collect the first indicators of compromise.',
        tools: ['open_incident', 'search_logs'],
        params: { title: { from: 'state.title', required: true } },
      },
      {
        key: 'status_note',
        type: 'reply',
        text: 'Incident graded; see the severity in the result. Decision {{params.decision}}.',
        params: { decision: { from: 'decision_id' } },
      },
    ],
  },
  sample_state: {
    title: 'Checkout API 5xx spike in eu-west-1',
    description: 'Error rate on POST /checkout jumped to 38% at 14:02 UTC after the 13:55 deploy. Customers report failed payments on social media.',
    service: 'checkout-api',
    error_rate: 0.38,
    affected_customers: 5200,
    region: 'eu-west-1',
    alerts: [{ name: 'checkout_5xx_rate', fired_at: '14:03' }],
  },
});
