import { fullSchema, normalized } from './__fixtures__/schemas';
import { decisionContract } from './contract';
import { validateState } from './state';

const schema = normalized(fullSchema());
const contract = decisionContract({ slug: 'refunds', status: 'deployed', version: 3, schema });

describe('decisionContract', () => {
  it('describes the active version in snake_case', () => {
    expect(contract).toEqual({
      slug: 'refunds',
      status: 'deployed',
      version: 3,
      state_schema: schema.state,
      example_state: { message: 'example', amount: 0, plan: 'free', customer: {}, tags: [] },
      questions: [
        {
          key: 'intent',
          kind: 'choice',
          instructions: 'What does the customer want? Read `message`.',
          options: [
            { value: 'refund', description: 'Wants the money back' },
            { value: 'exchange', description: null },
            { value: 'other', description: null },
          ],
        },
        {
          key: 'urgency',
          kind: 'score',
          instructions: 'How upset is the customer?',
          levels: [
            { label: 'calm' },
            { label: 'annoyed', description: 'Complains but stays polite' },
            { label: 'furious', rubric: { signals: ['threats', 'caps lock'] } },
          ],
        },
        { key: 'fraud', kind: 'probability', instructions: 'Judge the refund request.', criterion: 'The request shows signs of fraud' },
      ],
      actions: ['continue', 'block', 'escalate', 'fallback'],
      fallback_action: 'escalate',
    });
  });

  it('never carries destinations, policies, composites or settings', () => {
    const text = JSON.stringify(contract);
    for (const secret of ['hooks.example.com', 'destinations', 'policies', 'composites', 'settings', 'claude-sonnet', 'minConfidence', 'threshold']) {
      expect(text).not.toContain(secret);
    }
  });

  it('offers an example state the version accepts', () => {
    expect(validateState(schema, contract.example_state)).toEqual({ ok: true });
  });

  it('hands out a copy of the state schema', () => {
    (contract.state_schema as { type: string }).type = 'text';
    expect(schema.state.type).toBe('object');
  });
});
