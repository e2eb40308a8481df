import { fullSchema, normalized } from './__fixtures__/schemas';
import { makesCallerWait, matchingDestinations, resolvePath, type RunContext } from './destinations';
import { evaluate, type Evaluation } from './evaluate';
import type { NormalizedSchema } from './schema-types';

type Json = Record<string, unknown>;

const context: RunContext = {
  state: { message: 'hi', customer: { name: 'Ana', tags: ['vip'] }, amount: 0 },
  decisionId: 'dec_00000000000000000000',
  executionId: 'exec_00000000000000000000',
};

/** intent refund (certain), urgency annoyed, fraud 0.9 → policy 0 blocks. */
const base = normalized(fullSchema());
const evaluation: Evaluation = evaluate(base, {
  intent: { refund: 1 },
  urgency: { annoyed: 1 },
  fraud: { yes: 0.9, no: 0.1 },
});

const schemaWith = (destinations: Json[]): NormalizedSchema => normalized({ ...fullSchema(), destinations });
const keysOf = (matches: ReturnType<typeof matchingDestinations>) => matches.map((m) => [m.destination.key, m.skipped?.reason ?? 'fires']);

describe('matchingDestinations', () => {
  it('keeps destinations whose conditions all hold, in schema order; none means always', () => {
    const schema = schemaWith([
      { key: 'always', type: 'webhook', url: 'https://x.example/a' },
      { key: 'blocked', type: 'webhook', url: 'https://x.example/b', when: [{ on: 'action', op: 'eq', value: 'block' }] },
      { key: 'escalated', type: 'webhook', url: 'https://x.example/c', when: [{ on: 'action', op: 'eq', value: 'escalate' }] },
      {
        key: 'both',
        type: 'webhook',
        url: 'https://x.example/d',
        when: [
          { on: 'answer', question: 'intent', op: 'eq', value: 'refund' },
          { on: 'answer', question: 'fraud', op: 'gte', value: 'threshold' },
        ],
      },
      {
        key: 'one_fails',
        type: 'webhook',
        url: 'https://x.example/e',
        when: [
          { on: 'answer', question: 'intent', op: 'eq', value: 'refund' },
          { on: 'score', question: 'urgency', op: 'gt', value: 2 },
        ],
      },
    ]);
    expect(evaluation.action).toBe('block');
    expect(keysOf(matchingDestinations(schema, evaluation, context))).toEqual([
      ['always', 'fires'],
      ['blocked', 'fires'],
      ['both', 'fires'],
    ]);
  });

  it('resolves params: paths into the run, fixed values, null where nothing is found', () => {
    const schema = schemaWith([
      {
        key: 'call',
        type: 'function',
        function: 'f',
        params: {
          name: { from: 'state.customer.name' },
          tag: { from: 'state.customer.tags.0' },
          whole: { from: 'state.customer' },
          intent: { from: 'result.intent' },
          confidence: { from: 'confidence.fraud' },
          level: { from: 'scores.urgency' },
          risk: { from: 'composites.risk' },
          action: { from: 'action' },
          decision: { from: 'decision_id' },
          execution: { from: 'execution_id' },
          missing: { from: 'state.customer.email' },
          zero: { from: 'state.amount' },
          fixed: { value: { team: 'ops' } },
        },
      },
    ]);
    const [match] = matchingDestinations(schema, evaluation, context);
    expect(match?.params).toEqual({
      name: 'Ana',
      tag: 'vip',
      whole: { name: 'Ana', tags: ['vip'] },
      intent: 'refund',
      confidence: evaluation.confidence.fraud,
      level: 2,
      risk: evaluation.composites?.risk,
      action: 'block',
      decision: context.decisionId,
      execution: context.executionId,
      missing: null,
      zero: 0,
      fixed: { team: 'ops' },
    });
    expect(match!.skipped).toBeUndefined();
  });

  it('skips a destination whose required param has no value, naming the param', () => {
    const schema = schemaWith([
      {
        key: 'say',
        type: 'reply',
        text: 'Hi {{params.email}}',
        params: { name: { from: 'state.customer.name', required: true }, email: { from: 'state.customer.email', required: true } },
      },
    ]);
    const [match] = matchingDestinations(schema, evaluation, context);
    expect(match?.skipped).toEqual({ reason: 'missing_param', param: 'email' });
  });

  it('fires at most 10 destinations, skipping the rest for the limit', () => {
    const schema = schemaWith([
      { key: 'missing', type: 'function', function: 'f', params: { x: { from: 'state.nope', required: true } } },
      ...Array.from({ length: 11 }, (_, i) => ({ key: `d${i}`, type: 'webhook', url: 'https://x.example/' })),
    ]);
    const matches = matchingDestinations(schema, evaluation, context);
    expect(keysOf(matches)).toEqual([['missing', 'missing_param'], ...Array.from({ length: 10 }, (_, i) => [`d${i}`, 'fires']), ['d10', 'limit']]);
  });

  it('lets at most 3 destinations hold the caller: llm and sync agents, not async agents', () => {
    const schema = schemaWith([
      { key: 'l1', type: 'llm', prompt: 'p' },
      { key: 'a_sync', type: 'agent', url: 'https://x.example/', mode: 'sync' },
      { key: 'a_async', type: 'agent', url: 'https://x.example/' },
      { key: 'l2', type: 'llm', prompt: 'p' },
      { key: 'l3', type: 'llm', prompt: 'p' },
      { key: 'hook', type: 'webhook', url: 'https://x.example/' },
    ]);
    expect(keysOf(matchingDestinations(schema, evaluation, context))).toEqual([
      ['l1', 'fires'],
      ['a_sync', 'fires'],
      ['a_async', 'fires'],
      ['l2', 'fires'],
      ['l3', 'limit'],
      ['hook', 'fires'],
    ]);
  });

  it('tells which destinations hold the caller', () => {
    const { destinations } = schemaWith([
      { key: 'l', type: 'llm', prompt: 'p' },
      { key: 's', type: 'agent', url: 'https://x.example/', mode: 'sync' },
      { key: 'a', type: 'agent', url: 'https://x.example/', mode: 'async' },
      { key: 'w', type: 'webhook', url: 'https://x.example/' },
    ]);
    expect(destinations.map(makesCallerWait)).toEqual([true, true, false, false]);
  });
});

describe('resolvePath', () => {
  it.each([
    ['state', context.state],
    ['state.customer.tags.0', 'vip'],
    ['state.customer.tags.1', null],
    ['state.customer.tags.x', null],
    ['state.message.length', null],
    ['state.constructor', null],
    ['result.intent', 'refund'],
    ['scores', evaluation.scores],
    ['result.nope', null],
  ])('%s', (path, value) => {
    expect(resolvePath(path, evaluation, context)).toEqual(value);
  });

  it('indexes list states', () => {
    expect(resolvePath('state.1.id', evaluation, { ...context, state: [{ id: 1 }, { id: 2 }] })).toBe(2);
  });
});
