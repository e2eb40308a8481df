import { fullSchema } from './__fixtures__/schemas';
import { DESTINATION_TYPES, OPERATORS } from './schema-types';
import { validateSchema } from './validate-schema';
import {
  conditionFor,
  newCondition,
  operandId,
  operandsOf,
  operatorsFor,
  optionValues,
  freshParamSource,
  paramSources,
  renameReferences,
  retypeDestination,
  templatePlaceholders,
  termFor,
  valueFits,
} from './draft-forms';

// The fixture is typed loosely; these tests reach into it freely.
const full = (): any => fullSchema();

const issuesOf = (schema: unknown) => {
  const result = validateSchema(schema);
  return result.valid ? [] : result.issues;
};

describe('operandsOf', () => {
  const doc = full();

  it('offers answers, confidences, weighted scores and composites for policies, in question order', () => {
    const ids = operandsOf(doc, false).map((operand) => operand.id);
    expect(ids).toEqual([
      'answer:intent',
      'confidence:intent',
      'answer:urgency',
      'score:urgency',
      'confidence:urgency',
      'answer:fraud',
      'confidence:fraud',
      'composite:risk',
    ]);
  });

  it('adds the action and the threshold for destinations only', () => {
    const policy = operandsOf(doc, false);
    const destination = operandsOf(doc, true);
    expect(policy.some((operand) => operand.on === 'action')).toBe(false);
    expect(destination.at(-1)).toMatchObject({ id: 'action', kind: 'action', values: ['continue', 'block', 'escalate', 'fallback'] });
    expect(policy.find((operand) => operand.id === 'answer:fraud')?.hasThreshold).toBe(false);
    expect(destination.find((operand) => operand.id === 'answer:fraud')?.hasThreshold).toBe(true);
  });

  it('types each operand by what it compares with', () => {
    const byId = new Map(operandsOf(doc, false).map((operand) => [operand.id, operand]));
    expect(byId.get('answer:intent')).toMatchObject({ kind: 'option', values: ['refund', 'exchange', 'other'] });
    expect(byId.get('answer:urgency')).toMatchObject({ kind: 'level', values: ['calm', 'annoyed', 'furious'] });
    expect(byId.get('score:urgency')).toMatchObject({ kind: 'weighted', min: 1, max: 3 });
    expect(byId.get('confidence:intent')).toMatchObject({ kind: 'unit', min: 0, max: 1 });
    expect(byId.get('answer:fraud')).toMatchObject({ kind: 'probability', min: 0, max: 1 });
    expect(byId.get('composite:risk')).toMatchObject({ kind: 'composite', min: -1, max: 1 });
  });

  it('skips questions and composites without a key, and survives a draft that is not a schema', () => {
    expect(operandsOf({ questions: [{ kind: 'choice', options: [] }, null], composites: [{ terms: [] }] }, false)).toEqual([]);
    expect(operandsOf(null, true).map((operand) => operand.id)).toEqual(['action']);
  });

  it('labels rubric levels without a label by their position, as normalization does', () => {
    const levels = operandsOf({ questions: [{ key: 'q', kind: 'score', levels: ['a', { rubric: { x: 1 } }] }] }, false);
    expect(levels[0]?.values).toEqual(['a', '2']);
  });
});

describe('operatorsFor', () => {
  it('allows only eq and neq on labels, every operator on numbers', () => {
    expect(operatorsFor('option')).toEqual(['eq', 'neq']);
    expect(operatorsFor('level')).toEqual(['eq', 'neq']);
    expect(operatorsFor('action')).toEqual(['eq', 'neq']);
    for (const kind of ['probability', 'unit', 'weighted', 'composite'] as const) expect(operatorsFor(kind)).toEqual(OPERATORS);
  });
});

describe('conditionFor', () => {
  it('builds, for every operand and every operator it allows, a condition the validator accepts', () => {
    for (const forDestination of [false, true]) {
      for (const operand of operandsOf(full(), forDestination)) {
        for (const op of operatorsFor(operand.kind)) {
          const condition = { ...conditionFor(operand), op };
          const schema = full();
          if (forDestination) schema.destinations[0].when = [condition];
          else schema.policies = [{ when: condition, action: 'block' }];
          expect([operand.id, op, issuesOf(schema)]).toEqual([operand.id, op, []]);
        }
      }
    }
  });

  it('keeps the operator and value where they still fit the new operand', () => {
    const [intentAnswer, intentConfidence, , urgencyScore] = operandsOf(full(), false);
    expect(conditionFor(intentConfidence!, { on: 'answer', question: 'fraud', op: 'lt', value: 0.2 })).toEqual({
      on: 'confidence',
      question: 'intent',
      op: 'lt',
      value: 0.2,
    });
    expect(conditionFor(intentAnswer!, { on: 'answer', question: 'x', op: 'neq', value: 'exchange' })).toEqual({
      on: 'answer',
      question: 'intent',
      op: 'neq',
      value: 'exchange',
    });
    // An ordering operator and a number do not fit a choice answer: eq and its first option replace them.
    expect(conditionFor(intentAnswer!, { on: 'confidence', question: 'intent', op: 'gt', value: 0.7 })).toEqual({
      on: 'answer',
      question: 'intent',
      op: 'eq',
      value: 'refund',
    });
    // 0.7 is below a weighted score's range (1..3).
    expect(conditionFor(urgencyScore!, { on: 'confidence', question: 'intent', op: 'gt', value: 0.7 })).toMatchObject({ op: 'gt', value: 3 });
  });

  it('names a composite by `composite` and the action without a question', () => {
    const operands = operandsOf(full(), true);
    expect(conditionFor(operands.find((operand) => operand.on === 'composite')!)).toEqual({ on: 'composite', composite: 'risk', op: 'gte', value: 0.5 });
    expect(conditionFor(operands.find((operand) => operand.on === 'action')!)).toEqual({ on: 'action', op: 'eq', value: 'escalate' });
  });

  it('newCondition starts from the first operand, or an empty answer condition when there is none', () => {
    expect(newCondition(operandsOf(full(), false))).toEqual({ on: 'answer', question: 'intent', op: 'eq', value: 'refund' });
    expect(newCondition([])).toEqual({ on: 'answer', question: '', op: 'eq', value: '' });
  });
});

describe('valueFits and operandId', () => {
  it('checks values against the operand', () => {
    const byId = new Map(operandsOf(full(), true).map((operand) => [operand.id, operand]));
    expect(valueFits(byId.get('answer:intent')!, 'refund')).toBe(true);
    expect(valueFits(byId.get('answer:intent')!, 'nope')).toBe(false);
    expect(valueFits(byId.get('composite:risk')!, -1)).toBe(true);
    expect(valueFits(byId.get('composite:risk')!, 1.01)).toBe(false);
    expect(valueFits(byId.get('confidence:fraud')!, Number.NaN)).toBe(false);
    expect(valueFits(byId.get('answer:fraud')!, 'threshold')).toBe(true);
    expect(valueFits(byId.get('confidence:fraud')!, 'threshold')).toBe(false);
  });

  it('names the operand a stored condition refers to', () => {
    expect(operandId({ on: 'score', question: 'urgency' })).toBe('score:urgency');
    expect(operandId({ on: 'composite', composite: 'risk' })).toBe('composite:risk');
    expect(operandId({ on: 'action', op: 'eq', value: 'block' })).toBe('action');
    expect(operandId(undefined)).toBe(':');
  });
});

describe('renameReferences', () => {
  const renamed = (of: 'question' | 'composite', from: string, to: string) => {
    const doc = full();
    const list = of === 'question' ? doc.questions : doc.composites;
    list.find((item: any) => item.key === from).key = to;
    return renameReferences(doc, of, from, to);
  };

  it("moves rules, destination conditions and composite terms to a question's new key, and the draft stays valid", () => {
    const doc = renamed('question', 'fraud', 'fraud_risk');
    expect(doc.policies[0].when.question).toBe('fraud_risk');
    expect(doc.policies[0].and[0].question).toBe('fraud_risk');
    expect(doc.composites[0].terms[0]).toEqual({ question: 'fraud_risk', weight: 3 });
    const intent = renamed('question', 'intent', 'wish');
    expect(intent.destinations[0].when[0].question).toBe('wish');
    expect(intent.composites[0].terms[2].question).toBe('wish');
    expect(issuesOf(doc)).toEqual([]);
    expect(issuesOf(intent)).toEqual([]);
  });

  it("moves composite conditions to a composite's new key", () => {
    const doc = renamed('composite', 'risk', 'danger');
    expect(doc.policies[1].when).toEqual({ on: 'composite', composite: 'danger', op: 'gt', value: 0.7 });
    expect(issuesOf(doc)).toEqual([]);
    // A question named like the composite is left alone.
    expect(doc.policies[0].when.question).toBe('fraud');
  });

  it("renames nothing when either key is another's, when a key is empty, or when nothing changed", () => {
    const doc = full();
    doc.questions[0].key = 'fraud';
    // Two questions are now "fraud": which one the rules meant is unknown.
    expect(renameReferences(doc, 'question', 'intent', 'fraud')).toBe(doc);
    const emptied = full();
    emptied.questions[2].key = '';
    expect(renameReferences(emptied, 'question', 'fraud', '')).toBe(emptied);
    expect(renameReferences(full(), 'composite', 'risk', 'risk').policies[1].when.composite).toBe('risk');
  });
});

describe('composite terms', () => {
  it('names an option for choice questions only, keeping the weight', () => {
    const [intent, urgency] = full().questions;
    expect(termFor(intent, { question: 'fraud', weight: -2 })).toEqual({ question: 'intent', option: 'refund', weight: -2 });
    expect(termFor(urgency, { question: 'intent', option: 'refund', weight: 0 })).toEqual({ question: 'urgency', weight: 1 });
    expect(termFor(intent, { question: 'intent', option: 'exchange', weight: 3 })).toEqual({ question: 'intent', option: 'exchange', weight: 3 });
  });

  it('offers the reserved other option once', () => {
    expect(optionValues({ options: [{ value: 'a' }, { value: 'other' }] })).toEqual(['a', 'other']);
    expect(optionValues({ options: [{ value: 'a' }, { value: '' }] })).toEqual(['a', 'other']);
  });

  it('builds terms the validator accepts for every question', () => {
    for (const question of full().questions) {
      const schema = full();
      schema.composites = [...schema.composites, { key: 'mixed', terms: [termFor(question)] }];
      expect(issuesOf(schema)).toEqual([]);
    }
  });
});

describe('destinations', () => {
  it('retypes a destination into one the validator accepts, keeping the common fields and the URL', () => {
    const base = { key: 'ops', type: 'webhook', url: 'https://example.com/hook', when: [{ on: 'action', op: 'eq', value: 'block' }], headers: { 'X-A': '1' } };
    const http = retypeDestination(base, 'http');
    expect(http).toEqual({ ...base, type: 'http', method: 'POST' });
    const reply = retypeDestination(http, 'reply');
    expect(reply).toEqual({ key: 'ops', type: 'reply', text: '', when: base.when, headers: base.headers });
    for (const type of DESTINATION_TYPES) {
      const next = retypeDestination({ ...base, text: 'x', function: 'f', prompt: 'p', maxTokens: 100 }, type);
      // Fill in what an author would type into the fields the new type requires.
      const filled = {
        ...next,
        ...(next.text === '' ? { text: 'Hello' } : {}),
        ...(next.function === '' ? { function: 'notify' } : {}),
        ...(next.prompt === '' ? { prompt: 'Say' } : {}),
      };
      expect([type, issuesOf({ ...full(), destinations: [filled] })]).toEqual([type, []]);
    }
  });

  it('lists the placeholders and the param sources a destination may use', () => {
    expect(templatePlaceholders({ params: { name: { from: 'state.customer' }, code: { value: 1 } } })).toEqual(['{{params.name}}', '{{params.code}}']);
    expect(templatePlaceholders({})).toEqual([]);
    const sources = paramSources(full());
    expect(sources).toContain('state.message');
    expect(sources).toContain('result.intent');
    expect(sources).toContain('composites.risk');
    expect(sources.at(-1)).toBe('execution_id');
  });

  it('starts a new param at a source the validator accepts, the state’s first field or else the action', () => {
    const withParam = (doc: any) => ({
      ...doc,
      destinations: [{ key: 'crm', type: 'webhook', url: 'https://crm.example.com/hook', params: { param_1: { from: freshParamSource(doc) } } }],
    });
    expect(freshParamSource(full())).toBe(paramSources(full())[0]);
    expect(freshParamSource(full())).toMatch(/^state\.\w+$/);
    expect(issuesOf(withParam(full()))).toEqual([]);
    const textState = { ...full(), state: { type: 'text' } };
    expect(freshParamSource(textState)).not.toBe('state.');
    expect(issuesOf(withParam(textState))).toEqual([]);
    expect(freshParamSource(null)).toBe('action');
  });
});
