import { levelLabel } from './outcomes';
import { ACTIONS, EQUALITY_OPERATORS, OPERATORS, OTHER_OPTION, PARAM_ROOTS, THRESHOLD_VALUE, type DestinationType, type Operator } from './schema-types';
import { DESTINATION_COMMON_FIELDS, DESTINATION_FIELDS } from './validate-destinations';

// A draft's editing forms offer only what the validator accepts: these answer which operands a condition may name
// in a draft, which operators and values fit each, and what a change of operand, key or destination type leaves
// valid. They sit beside the validator so that the two cannot disagree.

type Json = any;
export type ConditionOn = 'answer' | 'confidence' | 'score' | 'composite' | 'action';

/**
 * What a condition's value is compared with:
 * `option` (a choice answer), `level` (a score answer's label), `probability` (a probability answer, 0..1),
 * `unit` (a confidence, 0..1), `weighted` (a score's weighted level, 1..levels), `composite` (−1..1), `action`.
 */
export type ValueKind = 'option' | 'level' | 'probability' | 'unit' | 'weighted' | 'composite' | 'action';

export interface Operand {
  /** Stable across renders: `answer:intent`, `composite:risk`, `action`. */
  id: string;
  on: ConditionOn;
  /** The question or composite named; absent for `action`. */
  ref?: string;
  kind: ValueKind;
  /** The values an `option`, `level` or `action` operand may take. */
  values?: string[];
  min?: number;
  max?: number;
  /** A probability question with a threshold, which destination conditions may name. */
  hasThreshold?: boolean;
}

const list = (value: unknown): Json[] => (Array.isArray(value) ? value : []);
const isKeyed = (item: Json): item is { key: string } => typeof item?.key === 'string' && item.key !== '';

/** The options a choice question's answer can be: its own, and the reserved `other` that normalization adds. */
export function optionValues(question: Json): string[] {
  const values = list(question?.options)
    .map((option) => option?.value)
    .filter((value): value is string => typeof value === 'string' && value !== '');
  return values.includes(OTHER_OPTION) ? values : [...values, OTHER_OPTION];
}

export function levelLabelsOf(question: Json): string[] {
  return list(question?.levels)
    .filter((level) => typeof level === 'string' || (level !== null && typeof level === 'object'))
    .map((level, index) => levelLabel(level, index));
}

/** Every operand a condition may name in `doc`, in the order the form offers them. */
export function operandsOf(doc: Json, forDestination: boolean): Operand[] {
  const operands: Operand[] = [];
  for (const question of list(doc?.questions).filter(isKeyed)) {
    const key = question.key;
    const q = question as Json;
    if (q.kind === 'choice') operands.push({ id: `answer:${key}`, on: 'answer', ref: key, kind: 'option', values: optionValues(q) });
    else if (q.kind === 'score') {
      const labels = levelLabelsOf(q);
      operands.push({ id: `answer:${key}`, on: 'answer', ref: key, kind: 'level', values: labels });
      operands.push({ id: `score:${key}`, on: 'score', ref: key, kind: 'weighted', min: 1, max: Math.max(labels.length, 1) });
    } else if (q.kind === 'probability') {
      operands.push({
        id: `answer:${key}`,
        on: 'answer',
        ref: key,
        kind: 'probability',
        min: 0,
        max: 1,
        hasThreshold: forDestination && typeof q.threshold === 'number',
      });
    } else continue;
    operands.push({ id: `confidence:${key}`, on: 'confidence', ref: key, kind: 'unit', min: 0, max: 1 });
  }
  for (const composite of list(doc?.composites).filter(isKeyed)) {
    operands.push({ id: `composite:${composite.key}`, on: 'composite', ref: composite.key, kind: 'composite', min: -1, max: 1 });
  }
  if (forDestination) operands.push({ id: 'action', on: 'action', kind: 'action', values: [...ACTIONS] });
  return operands;
}

/** The id of the operand a stored condition names, whether or not it still exists. */
export function operandId(condition: Json): string {
  const on = condition?.on;
  if (on === 'action') return 'action';
  if (on === 'composite') return `composite:${String(condition?.composite ?? '')}`;
  return `${String(on ?? '')}:${String(condition?.question ?? '')}`;
}

/** Labels (options, levels, actions) only compare as equal or not: ordering them would compare text. */
export function operatorsFor(kind: ValueKind): readonly Operator[] {
  return kind === 'option' || kind === 'level' || kind === 'action' ? EQUALITY_OPERATORS : OPERATORS;
}

/** Whether `value` is one the validator accepts for `operand`. */
export function valueFits(operand: Operand, value: unknown): boolean {
  if (operand.values) return typeof value === 'string' && operand.values.includes(value);
  if (operand.hasThreshold && value === THRESHOLD_VALUE) return true;
  return typeof value === 'number' && Number.isFinite(value) && value >= (operand.min ?? -Infinity) && value <= (operand.max ?? Infinity);
}

function defaultValue(operand: Operand): string | number {
  if (operand.values) return operand.kind === 'action' ? 'escalate' : (operand.values[0] ?? '');
  if (operand.kind === 'composite') return 0.5;
  if (operand.kind === 'weighted') return operand.max ?? 1;
  return 0.5;
}

/**
 * The condition after its operand changed: the operator and value are kept where they still fit, otherwise the
 * first operator and a value in range replace them, so the form never holds a condition the validator refuses.
 */
export function conditionFor(operand: Operand, previous?: Json): Json {
  const operators = operatorsFor(operand.kind);
  const op = operators.includes(previous?.op) ? previous.op : operand.values ? 'eq' : 'gte';
  const value = previous !== undefined && valueFits(operand, previous.value) ? previous.value : defaultValue(operand);
  if (operand.on === 'action') return { on: 'action', op, value };
  if (operand.on === 'composite') return { on: 'composite', composite: operand.ref, op, value };
  return { on: operand.on, question: operand.ref, op, value };
}

/** A first condition for a new rule: the first operand the draft offers, or an empty answer condition. */
export function newCondition(operands: readonly Operand[]): Json {
  const first = operands[0];
  return first ? conditionFor(first) : { on: 'answer', question: '', op: 'eq', value: '' };
}

/**
 * The draft after a question or composite key changed from `from` to `to`: rules, destination conditions and (for a
 * question) composite terms that named the old key name the new one, so that renaming does not leave them pointing
 * at nothing. Nothing is renamed when either key is held by another question or composite of the same list (the
 * references would then be ambiguous, or merged with another's for good).
 */
export function renameReferences(doc: Json, of: 'question' | 'composite', from: unknown, to: unknown): Json {
  if (typeof from !== 'string' || from === '' || typeof to !== 'string' || to === '' || from === to) return doc;
  const keys = list(doc?.[of === 'question' ? 'questions' : 'composites']).map((item) => item?.key);
  // `doc` already holds the new key: one item has `to`, and no other may have either key.
  if (keys.filter((key) => key === to).length !== 1 || keys.includes(from)) return doc;
  const field = of === 'question' ? 'question' : 'composite';
  const names = (condition: Json) => (of === 'question' ? condition?.on !== 'composite' && condition?.on !== 'action' : condition?.on === 'composite');
  const renamed = (condition: Json) => (names(condition) && condition?.[field] === from ? { ...condition, [field]: to } : condition);
  const conditions = (value: unknown) => (Array.isArray(value) ? value.map(renamed) : value);
  const next = { ...doc };
  if (Array.isArray(doc?.policies)) {
    next.policies = doc.policies.map((policy: Json) =>
      policy && typeof policy === 'object'
        ? { ...policy, ...('when' in policy ? { when: renamed(policy.when) } : {}), ...('and' in policy ? { and: conditions(policy.and) } : {}) }
        : policy,
    );
  }
  if (Array.isArray(doc?.destinations)) {
    next.destinations = doc.destinations.map((destination: Json) =>
      destination && typeof destination === 'object' && 'when' in destination ? { ...destination, when: conditions(destination.when) } : destination,
    );
  }
  if (of === 'question' && Array.isArray(doc?.composites)) {
    next.composites = doc.composites.map((composite: Json) =>
      Array.isArray(composite?.terms)
        ? { ...composite, terms: composite.terms.map((term: Json) => (term?.question === from ? { ...term, question: to } : term)) }
        : composite,
    );
  }
  return next;
}

/** A composite term for `question`: choice questions need an option, other kinds must not have one. */
export function termFor(question: Json, previous?: Json): Json {
  const weight = typeof previous?.weight === 'number' && previous.weight !== 0 ? previous.weight : 1;
  if (question?.kind !== 'choice') return { question: question?.key ?? '', weight };
  const options = optionValues(question);
  const option = options.includes(previous?.option) ? previous.option : (options[0] ?? '');
  return { question: question.key, option, weight };
}

const REQUIRED_START: Record<DestinationType, Json> = {
  reply: { text: '' },
  function: { function: '' },
  llm: { prompt: '' },
  agent: { url: '' },
  workflow: { url: '' },
  webhook: { url: '' },
  http: { url: '', method: 'POST' },
};

/**
 * The destination as another type: the common fields and the fields both types share (a URL) are kept, the
 * others dropped (the validator refuses fields of another type), and the new type's required fields added.
 */
export function retypeDestination(destination: Json, type: DestinationType): Json {
  const keep = new Set([...DESTINATION_COMMON_FIELDS, ...DESTINATION_FIELDS[type]]);
  const next: Json = { ...REQUIRED_START[type] };
  for (const [name, value] of Object.entries(destination ?? {})) if (keep.has(name)) next[name] = value;
  next.type = type;
  return next;
}

/** Whether the destination type sends to a URL (and so has the plain-http warning). */
export const hasUrl = (type: unknown): boolean => typeof type === 'string' && DESTINATION_FIELDS[type as DestinationType]?.includes('url') === true;

/** Whether headers mean anything for the type: they travel with calls to a URL. */
export const takesHeaders = hasUrl;

/** The template placeholders a destination may use: its params, and the roots a param's `from` may start with. */
export function templatePlaceholders(destination: Json): string[] {
  const params = destination?.params && typeof destination.params === 'object' ? Object.keys(destination.params) : [];
  return params.map((name) => `{{params.${name}}}`);
}

/** Where a new param reads from: the first source the draft offers, so a param just added is valid as it stands. */
export function freshParamSource(doc: Json): string {
  return paramSources(doc)[0] ?? 'action';
}

/** The paths a param may read, offered as suggestions: state fields of an object state, then the other roots. */
export function paramSources(doc: Json): string[] {
  const fields = doc?.state?.type === 'object' && doc.state.fields && typeof doc.state.fields === 'object' ? Object.keys(doc.state.fields) : [];
  const questions = list(doc?.questions)
    .filter(isKeyed)
    .map((question) => question.key);
  const composites = list(doc?.composites)
    .filter(isKeyed)
    .map((composite) => composite.key);
  return [
    ...fields.map((name) => `state.${name}`),
    ...questions.flatMap((key) => [`result.${key}`, `confidence.${key}`]),
    ...composites.map((key) => `composites.${key}`),
    ...PARAM_ROOTS.filter((root) => ['action', 'decision_id', 'execution_id'].includes(root)),
  ];
}
