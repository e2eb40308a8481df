import { translate } from './i18n';
import { describePath } from './wording';

const t = (key: Parameters<typeof translate>[1], vars?: Record<string, string | number>) => translate('en', key, vars);
const doc = {
  state: { type: 'object', fields: { plan: { type: 'string', enum: ['free', 'pro'] } } },
  questions: [
    { key: 'intent', kind: 'choice', options: [{ value: 'refund' }, { value: '' }, { value: 'other' }] },
    { key: '', kind: 'score', levels: ['low', 'high'] },
  ],
  destinations: [{ key: 'ops', type: 'webhook', url: 'http://127.0.0.1' }],
  policies: [{ action: 'block' }],
};

describe('describePath', () => {
  it('counts from 1 as the form does and names items by their key or value', () => {
    expect(describePath('questions.0.options.1.value', doc, t)).toBe('Question 1 (intent) › Option 2 › Value');
    expect(describePath('questions.0.options.0', doc, t)).toBe('Question 1 (intent) › Option 1 (refund)');
    expect(describePath('questions.1.levels.1', doc, t)).toBe('Question 2 › Level 2 (high)');
    expect(describePath('questions.4', doc, t)).toBe('Question 5');
  });

  it('names state fields, settings, destinations and policies in the form’s words', () => {
    expect(describePath('state.fields.plan.enum.1', doc, t)).toBe('State › Field plan › Allowed value 2 (pro)');
    expect(describePath('state.fields.address.fields.street.type', doc, t)).toBe('State › Field address › Field street › Type');
    expect(describePath('destinations.0.url', doc, t)).toBe('Destination 1 (ops) › URL');
    expect(describePath('policies.0.action', doc, t)).toBe('Rule 1 › Action');
    expect(describePath('settings.timeoutMs', doc, t)).toBe('Settings › Timeout (ms)');
    expect(describePath('', doc, t)).toBe('The schema');
  });

  it('numbers a rule’s extra conditions after its when, as the rule form does, and names condition and destination parts', () => {
    expect(describePath('policies.0.when.value', doc, t)).toBe('Rule 1 › When › Value');
    expect(describePath('policies.0.and.0.op', doc, t)).toBe('Rule 1 › Condition 2 › Operator');
    expect(describePath('destinations.0.when.1.question', doc, t)).toBe('Destination 1 (ops) › Condition 2 › Question');
    expect(describePath('destinations.0.headers.X-Token', doc, t)).toBe('Destination 1 (ops) › Headers › X-Token');
    expect(describePath('composites.0.terms.1.weight', doc, t)).toBe('Composite 1 › Term 2 › Weight');
  });
});
