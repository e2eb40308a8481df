// Run-time checks of a state against its decision (step 7 of the run's order of checks). The first problem found
// is the answer: the public error carries one message that names the field or the limit.
import { formatNumber, isRecord, ownValue, serialize } from './json';
import {
  LIST_ITEMS_MAX,
  LIST_ITEMS_MIN,
  STATE_AND_ALL_QUESTIONS_TOKENS_MAX,
  STATE_AND_LONGEST_QUESTION_TOKENS_MAX,
  STATE_BYTES_MAX,
  STATE_TOKENS_MAX,
} from './limits';
import type { ListItemType, NormalizedSchema, StateField, StateFieldType, StateSchema } from './schema-types';
import { questionTokens, tokensOfJson } from './tokens';

export type StateCheck = { ok: true } | { ok: false; message: string; field?: string };

const OK: StateCheck = { ok: true };

/** Everything a run checks: the state schema, the state's own size, and the token budget with the questions. */
export function validateState(schema: NormalizedSchema, state: unknown): StateCheck {
  const alone = measureState(schema.state, state);
  if (!alone.ok) return alone;
  const stateTokens = alone.tokens;
  const questions = questionTokens(schema);
  const withLongest = stateTokens + questions.longest.tokens;
  if (withLongest > STATE_AND_LONGEST_QUESTION_TOKENS_MAX) {
    return limitProblem(
      `state (about ${formatNumber(stateTokens)} tokens) plus the longest question, "${questions.longest.key}" ` +
        `(about ${formatNumber(questions.longest.tokens)} tokens), is about ${formatNumber(withLongest)} tokens; ` +
        `the limit is ${formatNumber(STATE_AND_LONGEST_QUESTION_TOKENS_MAX)}`,
    );
  }
  const withAll = stateTokens + questions.total;
  if (withAll > STATE_AND_ALL_QUESTIONS_TOKENS_MAX) {
    return limitProblem(
      `state (about ${formatNumber(stateTokens)} tokens) plus all questions (about ${formatNumber(questions.total)} tokens) ` +
        `is about ${formatNumber(withAll)} tokens; the limit is ${formatNumber(STATE_AND_ALL_QUESTIONS_TOKENS_MAX)}`,
    );
  }
  return OK;
}

/**
 * The state schema and the state's own size limits, without the questions (MCP `check_state`). Only the state
 * schema is read, so a decision's public contract (`state_schema`) is enough.
 */
export function checkStateAlone(schema: Pick<NormalizedSchema, 'state'>, state: unknown): StateCheck {
  const result = measureState(schema.state, state);
  return result.ok ? OK : result;
}

function measureState(stateSchema: StateSchema, state: unknown): { ok: true; tokens: number } | Extract<StateCheck, { ok: false }> {
  const shape = checkShape(stateSchema, state);
  if (!shape.ok) return shape;
  const serialized = serialize(state);
  if (serialized === undefined) return problem('state', 'state must be JSON');
  const bytes = utf8Length(serialized);
  if (bytes > STATE_BYTES_MAX) {
    return limitProblem(`state is ${formatNumber(bytes)} bytes serialized; the limit is ${formatNumber(STATE_BYTES_MAX)} (128 KB)`);
  }
  const tokens = tokensOfJson(serialized);
  if (tokens > STATE_TOKENS_MAX) {
    return limitProblem(`state is about ${formatNumber(tokens)} tokens; the limit is ${formatNumber(STATE_TOKENS_MAX)}`);
  }
  return { ok: true, tokens };
}

/** Buffer on the run path (no copy); the web application, which runs these checks in the browser, has only TextEncoder. */
function utf8Length(text: string): number {
  return typeof Buffer === 'undefined' ? new TextEncoder().encode(text).length : Buffer.byteLength(text, 'utf8');
}

function checkShape(stateSchema: StateSchema, state: unknown): StateCheck {
  if (state === undefined) return problem('state', 'state is required');
  switch (stateSchema.type) {
    case 'text':
      return typeof state === 'string' && state.length > 0 ? OK : problem('state', 'state must be a non-empty string');
    case 'list':
      return checkList(stateSchema.items, state);
    case 'object':
      return checkObject(stateSchema.fields, state);
  }
}

function checkList(items: ListItemType, state: unknown): StateCheck {
  if (!Array.isArray(state)) return problem('state', `state must be an array of ${LIST_ITEMS_MIN} to ${LIST_ITEMS_MAX} items`);
  if (state.length < LIST_ITEMS_MIN || state.length > LIST_ITEMS_MAX) {
    return problem('state', `state must have ${LIST_ITEMS_MIN} to ${LIST_ITEMS_MAX} items (has ${formatNumber(state.length)})`);
  }
  const wrong = state.findIndex((item) => (items === 'string' ? typeof item !== 'string' : !isRecord(item)));
  return wrong === -1 ? OK : problem(`state.${wrong}`, `state.${wrong} must be ${items === 'string' ? 'a string' : 'an object'}`);
}

// Undeclared fields are accepted and forwarded (spec). A null field counts as absent: a required field must
// hold a value, and an optional one may be sent as null, as serializers that write every property do.
function checkObject(fields: Record<string, StateField>, state: unknown): StateCheck {
  if (!isRecord(state)) return problem('state', 'state must be a JSON object');
  return checkFields(fields, state, 'state');
}

function checkFields(fields: Record<string, StateField>, state: Record<string, unknown>, parent: string): StateCheck {
  for (const [name, field] of Object.entries(fields)) {
    const value = ownValue(state, name);
    const path = `${parent}.${name}`;
    if (value === undefined || value === null) {
      if (field.required) return problem(path, `${path} is required`);
      continue;
    }
    if (!hasType(value, field.type)) return problem(path, `${path} must be ${TYPE_NAMES[field.type]}`);
    if (field.enum && !field.enum.includes(value as string)) return problem(path, `${path} must be one of ${field.enum.join(', ')}`);
    if (field.fields) {
      const inner = checkFields(field.fields, value as Record<string, unknown>, path);
      if (!inner.ok) return inner;
    }
  }
  return OK;
}

const TYPE_NAMES: Record<StateFieldType, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
};

function hasType(value: unknown, type: StateFieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isRecord(value);
    case 'array':
      return Array.isArray(value);
  }
}

function problem(field: string, message: string): Extract<StateCheck, { ok: false }> {
  return { ok: false, message, field };
}

function limitProblem(message: string): Extract<StateCheck, { ok: false }> {
  return problem('state', message);
}

/** A state the schema accepts: every declared field filled, enums with their first value. */
export function exampleState(schema: NormalizedSchema): unknown {
  const state = schema.state;
  switch (state.type) {
    case 'text':
      return 'example';
    case 'list':
      return state.items === 'string' ? ['example'] : [{}];
    case 'object':
      return Object.fromEntries(Object.entries(state.fields).map(([name, field]) => [name, exampleValue(field)]));
  }
}

function exampleValue(field: StateField): unknown {
  switch (field.type) {
    case 'string':
      return field.enum?.[0] ?? 'example';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return true;
    case 'object':
      return field.fields ? Object.fromEntries(Object.entries(field.fields).map(([name, inner]) => [name, exampleValue(inner)])) : {};
    case 'array':
      return [];
  }
}
