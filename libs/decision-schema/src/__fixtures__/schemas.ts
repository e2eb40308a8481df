// Schemas for the unit tests. Builders return fresh objects, so a test may change its copy freely.
import type { SchemaIssue } from '../issues';
import { normalizeValidInput } from '../normalize';
import type { NormalizedSchema, SchemaInput } from '../schema-types';
import { validateSchema } from '../validate-schema';

type Json = Record<string, unknown>;

/** The smallest valid schema: an object state, one choice question, a fallback action. */
export function minimalSchema(): Json {
  return {
    state: { type: 'object', fields: { message: { type: 'string', required: true } } },
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
    ],
    fallbackAction: 'escalate',
  };
}

/** One question of each kind, a composite, policies and destinations: decision-schema.md's example. */
export function fullSchema(): Json {
  return {
    state: {
      type: 'object',
      fields: {
        message: { type: 'string', description: 'What the customer wrote', required: true },
        amount: { type: 'number' },
        plan: { type: 'string', enum: ['free', 'pro'] },
        customer: { type: 'object' },
        tags: { type: 'array' },
      },
    },
    context: 'We sell refurbished phones in Brazil and Portugal.',
    questions: [
      {
        key: 'intent',
        kind: 'choice',
        instructions: 'What does the customer want? Read `message`.',
        options: [
          { value: 'refund', description: 'Wants the money back' },
          { value: 'exchange', description: null },
        ],
        minConfidence: 0.6,
      },
      {
        key: 'urgency',
        kind: 'score',
        instructions: 'How upset is the customer?',
        levels: ['calm', { label: 'annoyed', description: 'Complains but stays polite' }, { label: 'furious', rubric: { signals: ['threats', 'caps lock'] } }],
      },
      {
        key: 'fraud',
        kind: 'probability',
        instructions: 'Judge the refund request.',
        criterion: 'The request shows signs of fraud',
        threshold: 0.8,
      },
    ],
    composites: [
      {
        key: 'risk',
        description: 'Overall risk',
        terms: [
          { question: 'fraud', weight: 3 },
          { question: 'urgency', weight: 1 },
          { question: 'intent', option: 'refund', weight: 1 },
        ],
      },
    ],
    policies: [
      {
        when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.9 },
        and: [{ on: 'confidence', question: 'fraud', op: 'gte', value: 0.5 }],
        action: 'block',
      },
      { when: { on: 'composite', composite: 'risk', op: 'gt', value: 0.7 }, action: 'escalate' },
      { when: { on: 'score', question: 'urgency', op: 'gte', value: 2.5 }, action: 'escalate' },
    ],
    fallbackAction: 'escalate',
    settings: { engine: 'llm', model: 'claude-sonnet', timeoutMs: 5000, onEngineError: 'fallback', storeInput: false, storeOutput: true },
    destinations: [
      {
        key: 'apology',
        type: 'reply',
        when: [{ on: 'answer', question: 'intent', op: 'eq', value: 'refund' }],
        text: 'Sorry, {{params.name}}. We are on it.',
        buttons: ['Track my refund'],
        params: { name: { from: 'state.customer.name', required: true } },
      },
      { key: 'ops', type: 'webhook', url: 'https://hooks.example.com/decisions', when: [{ on: 'action', op: 'eq', value: 'escalate' }] },
    ],
  };
}

export function issuesOf(input: unknown): SchemaIssue[] {
  const result = validateSchema(input);
  return result.valid ? [] : result.issues;
}

export function normalized(input: unknown): NormalizedSchema {
  const result = validateSchema(input);
  if (!result.valid) throw new Error(`fixture invalid: ${JSON.stringify(result.issues)}`);
  return result.schema;
}

/** A string of exactly `length` characters. */
export function text(length: number, char = 'a'): string {
  return char.repeat(length);
}

/** A JSON object whose serialized form is exactly `length` characters (at least 8). */
export function jsonOfLength(length: number): Json {
  return { k: text(length - 8) }; // {"k":""} is 8 characters
}

/** A string option list of `count` options named o0, o1, … */
export function options(count: number): Json[] {
  return Array.from({ length: count }, (_, i) => ({ value: `o${i}`, description: null }));
}

/** Sets `value` at a dotted path of a fixture (numbers index arrays). */
export function withValue(schema: Json, path: string, value: unknown): Json {
  const parts = path.split('.');
  // split always returns at least one part: the last is the one set, the others lead to it.
  const last = parts.pop() ?? '';
  let target: Record<string, unknown> = schema;
  for (const part of parts) target = target[part] as Record<string, unknown>;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return schema;
}

/**
 * A choice question whose normalized form serializes to exactly `tokens` × 4 characters, plus `extraChars`
 * (so `extraChars = 1` makes it one token more).
 */
export function questionOfTokens(key: string, tokens: number, extraChars = 0): Json {
  const build = (fillers: number, lastLength: number): Json => ({
    key,
    kind: 'choice',
    instructions: 'x',
    options: [
      ...Array.from({ length: fillers }, (_, i) => ({ value: `o${String(i).padStart(3, '0')}`, description: text(1900) })),
      { value: 'last', description: text(lastLength) },
    ],
  });
  const size = (question: Json) =>
    JSON.stringify(normalizeValidInput({ ...minimalSchema(), questions: [question] } as unknown as SchemaInput).questions[0]).length;
  const target = tokens * 4 + extraChars;
  const perFiller = size(build(2, 0)) - size(build(1, 0));
  const fillers = Math.max(0, Math.floor((target - size(build(0, 0))) / perFiller));
  const question = build(fillers, target - size(build(fillers, 0)));
  if (size(question) !== target) throw new Error(`cannot build a question of ${target} characters`);
  return question;
}
