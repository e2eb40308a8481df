// What a deploy, a rollback or a comparison of two versions changes, said in the words of the editor's form.
// Questions, composites and destinations are matched by their key; rules have no identity of their own, so they
// are matched by content (a longest common subsequence over each rule's canonical form): inserting one rule at
// the top reads as one rule added, not as every later rule changed.
import { formatNumber } from './json';
import { type BreakingChange, breakingChanges } from './contract-changes';
import { referencedSecrets } from './secret-references';
import type {
  Composite,
  DestinationCondition,
  NormalizedDestination,
  NormalizedQuestion,
  NormalizedSchema,
  Operator,
  Policy,
  ScoreLevel,
  Settings,
  StateField,
  StateSchema,
} from './schema-types';

export const REVIEW_AREAS = ['contract', 'questions', 'composites', 'rules', 'destinations', 'settings'] as const;
export type ReviewArea = (typeof REVIEW_AREAS)[number];

export interface ReviewItem {
  area: ReviewArea;
  kind: 'added' | 'removed' | 'changed' | 'moved';
  /** What the item is about, as the form names it: a question or composite key, a destination key, a rule's position. */
  subject: string;
  /** The change in one sentence. */
  text: string;
  /** Whether a caller's call that works today fails or reads differently once this is deployed. */
  breaking: boolean;
}

export interface VersionReview {
  /** Nothing came before: `summary` says what the version holds and `areas` is empty. */
  first: boolean;
  /** What the newer version holds: "3 questions (intent, urgency, fraud), 3 rules, 2 destinations (apology, ops)". */
  summary: string;
  /** How many items `areas` holds. */
  changes: number;
  /** The areas with at least one item, in the form's order. */
  areas: Array<{ area: ReviewArea; items: ReviewItem[] }>;
  /** The breaking changes, classified as a breaking deploy is confirmed. */
  breaking: BreakingChange[];
}

/** The review of deploying `after` where `before` is active (null: nothing deployed yet). */
export function reviewVersions(before: NormalizedSchema | null, after: NormalizedSchema): VersionReview {
  const summary = describeSchema(after);
  if (before === null) return { first: true, summary, changes: 0, areas: [], breaking: [] };
  const items = [
    ...contractItems(before, after),
    ...questionItems(before.questions, after.questions),
    ...compositeItems(before.composites, after.composites),
    ...ruleItems(before.policies, after.policies),
    ...destinationItems(before.destinations, after.destinations),
    ...settingItems(before, after),
  ];
  const areas = REVIEW_AREAS.map((area) => ({ area, items: items.filter((item) => item.area === area) })).filter((group) => group.items.length > 0);
  return { first: false, summary, changes: items.length, areas, breaking: breakingChanges(before, after) };
}

/** "3 questions (a, b, c), 1 composite (risk), 2 rules, 1 destination (crm_hook)"; parts with none are left out. */
export function describeSchema(schema: NormalizedSchema): string {
  const part = (count: number, one: string, many: string, keys?: string[]) =>
    count === 0 ? null : `${count} ${count === 1 ? one : many}${keys ? ` (${keys.join(', ')})` : ''}`;
  return [
    part(
      schema.questions.length,
      'question',
      'questions',
      schema.questions.map((q) => q.key),
    ),
    part(
      schema.composites.length,
      'composite',
      'composites',
      schema.composites.map((c) => c.key),
    ),
    part(schema.policies.length, 'rule', 'rules'),
    part(
      schema.destinations.length,
      'destination',
      'destinations',
      schema.destinations.map((d) => d.key),
    ),
  ]
    .filter((text): text is string => text !== null)
    .join(', ');
}

// ---- warnings ----------------------------------------------------------------------------------------------

export interface MissingSecret {
  destination: string;
  header: string;
  secret: string;
}

/** Each destination header naming a secret the workspace does not have (`known`: the names it has; values never). */
export function missingSecrets(schema: NormalizedSchema, known: Iterable<string>): MissingSecret[] {
  const names = new Set(known);
  const missing: MissingSecret[] = [];
  for (const destination of schema.destinations)
    for (const [header, value] of Object.entries(destination.headers))
      for (const secret of referencedSecrets(value)) if (!names.has(secret)) missing.push({ destination: destination.key, header, secret });
  return missing;
}

// ---- words -------------------------------------------------------------------------------------------------

const OPERATOR_WORDS: Record<Operator, string> = { eq: '=', neq: '≠', gt: '>', gte: '≥', lt: '<', lte: '≤' };

/** A condition as the rule builder reads it: "`fraud` ≥ 0.9", "confidence of `intent` < 0.6". */
export function conditionText(condition: DestinationCondition): string {
  const op = OPERATOR_WORDS[condition.op];
  switch (condition.on) {
    case 'answer':
      return `\`${condition.question}\` ${op} ${condition.value}`;
    case 'confidence':
      return `confidence of \`${condition.question}\` ${op} ${condition.value}`;
    case 'score':
      return `score of \`${condition.question}\` ${op} ${condition.value}`;
    case 'composite':
      return `composite \`${condition.composite}\` ${op} ${condition.value}`;
    case 'action':
      return `action ${op} ${condition.value}`;
  }
}

/** "when `fraud` ≥ 0.9 and confidence of `fraud` ≥ 0.5 → block" */
export function ruleText(rule: Policy): string {
  return `when ${[rule.when, ...rule.and].map(conditionText).join(' and ')} → ${rule.action}`;
}

const list = (values: readonly string[]) => values.join(', ');
const shown = (value: unknown): string => (value === null || value === undefined ? 'none' : typeof value === 'string' ? value : JSON.stringify(value));
const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;
const onOff = (value: boolean) => (value ? 'on' : 'off');
const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);

/** JSON with object keys sorted, so two equal values written in another key order read the same. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

// ---- alignment ---------------------------------------------------------------------------------------------

/** Index pairs of a longest common subsequence of `a` and `b`, in order. */
export function longestCommonSubsequence(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const table = new Uint16Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      table[i * cols + j] = a[i] === b[j] ? table[(i + 1) * cols + j + 1]! + 1 : Math.max(table[(i + 1) * cols + j]!, table[i * cols + j + 1]!);
  const pairs: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) pairs.push([i++, j++]);
    else if (table[(i + 1) * cols + j]! >= table[i * cols + j + 1]!) i++;
    else j++;
  }
  return pairs;
}

/** Keys present on both sides that the order of the others does not explain: what moved. */
function movedKeys(before: readonly string[], after: readonly string[]): Set<string> {
  const both = new Set(after.filter((key) => before.includes(key)));
  const a = before.filter((key) => both.has(key));
  const b = after.filter((key) => both.has(key));
  const kept = new Set(longestCommonSubsequence(a, b).map(([i]) => a[i]!));
  return new Set([...both].filter((key) => !kept.has(key)));
}

// ---- contract ----------------------------------------------------------------------------------------------

function contractItems(before: NormalizedSchema, after: NormalizedSchema): ReviewItem[] {
  const items = stateItems(before.state, after.state);
  if (before.fallbackAction !== after.fallbackAction)
    items.push(item('contract', 'changed', 'fallback', `Fallback action: ${before.fallbackAction} → ${after.fallbackAction}`));
  return items;
}

function stateItems(before: StateSchema, after: StateSchema): ReviewItem[] {
  if (before.type !== after.type) return [item('contract', 'changed', 'state', `State: ${before.type} → ${after.type}`, true)];
  if (before.type === 'list' && after.type === 'list' && before.items !== after.items)
    return [item('contract', 'changed', 'state', `State list items: ${before.items} → ${after.items}`, true)];
  if (before.type !== 'object' || after.type !== 'object') return [];
  return fieldItems('', before.fields, after.fields);
}

function fieldItems(prefix: string, before: Record<string, StateField>, after: Record<string, StateField>): ReviewItem[] {
  const items: ReviewItem[] = [];
  for (const [name, field] of Object.entries(after)) {
    const path = `${prefix}${name}`;
    const old = Object.hasOwn(before, name) ? before[name] : undefined;
    if (!old) {
      items.push(item('contract', 'added', path, `State field \`${path}\` added (${field.type}, ${field.required ? 'required' : 'optional'})`, field.required));
      continue;
    }
    if (old.type !== field.type) {
      items.push(item('contract', 'changed', path, `State field \`${path}\`: type ${old.type} → ${field.type}`, true));
      continue;
    }
    if (old.required !== field.required)
      items.push(item('contract', 'changed', path, `State field \`${path}\`: ${field.required ? 'now required' : 'now optional'}`, field.required));
    items.push(...enumItems(path, old.enum, field.enum));
    if (old.description !== field.description) items.push(item('contract', 'changed', path, `State field \`${path}\`: description changed`));
    items.push(...fieldItems(`${path}.`, old.fields ?? {}, field.fields ?? {}));
  }
  for (const [name, field] of Object.entries(before))
    if (!Object.hasOwn(after, name))
      items.push(item('contract', 'removed', `${prefix}${name}`, `State field \`${prefix}${name}\` removed (${field.type})`, true));
  return items;
}

function enumItems(path: string, before: string[] | null, after: string[] | null): ReviewItem[] {
  if (before === null && after === null) return [];
  if (before === null) return [item('contract', 'changed', path, `State field \`${path}\`: now one of ${list(after!)}`, true)];
  if (after === null) return [item('contract', 'changed', path, `State field \`${path}\`: any value now accepted`)];
  const items: ReviewItem[] = [];
  const added = after.filter((value) => !before.includes(value));
  const removed = before.filter((value) => !after.includes(value));
  if (added.length > 0) items.push(item('contract', 'changed', path, `State field \`${path}\`: values added: ${list(added)}`));
  if (removed.length > 0) items.push(item('contract', 'changed', path, `State field \`${path}\`: values removed: ${list(removed)}`, true));
  return items;
}

// ---- questions ---------------------------------------------------------------------------------------------

function questionItems(before: NormalizedQuestion[], after: NormalizedQuestion[]): ReviewItem[] {
  const items: ReviewItem[] = [];
  const old = new Map(before.map((question) => [question.key, question]));
  const next = new Map(after.map((question) => [question.key, question]));
  const moved = movedKeys(
    before.map((q) => q.key),
    after.map((q) => q.key),
  );
  after.forEach((question, index) => {
    const was = old.get(question.key);
    const name = `Question \`${question.key}\``;
    if (!was) {
      items.push(item('questions', 'added', question.key, `${name} added (${questionShape(question)})`));
      return;
    }
    if (moved.has(question.key)) items.push(item('questions', 'moved', question.key, `${name} moved from position ${before.indexOf(was) + 1} to ${index + 1}`));
    items.push(...questionChanges(name, was, question));
  });
  for (const question of before)
    if (!next.has(question.key)) items.push(item('questions', 'removed', question.key, `Question \`${question.key}\` removed`, true));
  return items;
}

function questionShape(question: NormalizedQuestion): string {
  switch (question.kind) {
    case 'choice':
      return `choice: ${list(question.options.map((option) => option.value))}`;
    case 'score':
      return `score: ${list(question.levels.map(levelName))}`;
    case 'probability':
      return `probability${question.threshold === null ? '' : `, threshold ${question.threshold}`}`;
  }
}

function questionChanges(name: string, was: NormalizedQuestion, now: NormalizedQuestion): ReviewItem[] {
  const key = now.key;
  const changed = (text: string, breaking = false) => item('questions', 'changed', key, `${name}: ${text}`, breaking);
  if (was.kind !== now.kind) return [changed(`kind ${was.kind} → ${now.kind} (${questionShape(now)})`, true)];
  const items: ReviewItem[] = [];
  if (!same(was.instructions, now.instructions)) items.push(changed('instructions changed'));
  if (was.minConfidence !== now.minConfidence) items.push(changed(`minimum confidence ${shown(was.minConfidence)} → ${shown(now.minConfidence)}`));
  if (was.kind === 'choice' && now.kind === 'choice') {
    const oldValues = was.options.map((option) => option.value);
    const newValues = now.options.map((option) => option.value);
    const added = newValues.filter((value) => !oldValues.includes(value));
    const removed = oldValues.filter((value) => !newValues.includes(value));
    if (added.length > 0) items.push(changed(`options added: ${list(added)}`));
    if (removed.length > 0) items.push(changed(`options removed: ${list(removed)}`, true));
    const described = now.options
      .filter((option) => {
        const old = was.options.find((candidate) => candidate.value === option.value);
        return old !== undefined && !same(old.description, option.description);
      })
      .map((option) => option.value);
    if (described.length > 0) items.push(changed(`descriptions changed of options ${list(described)}`));
  }
  if (was.kind === 'score' && now.kind === 'score') {
    const oldLabels = was.levels.map(levelName);
    const newLabels = now.levels.map(levelName);
    const added = newLabels.filter((label) => !oldLabels.includes(label));
    const removed = oldLabels.filter((label) => !newLabels.includes(label));
    if (added.length > 0) items.push(changed(`levels added: ${list(added)}`));
    if (removed.length > 0) items.push(changed(`levels removed: ${list(removed)}`, true));
    const kept = (labels: string[], other: string[]) => labels.filter((label) => other.includes(label));
    // A score is a level's position, so a new order changes what every answer means.
    if (added.length === 0 && removed.length === 0 && !same(oldLabels, newLabels))
      items.push(changed(`levels reordered: ${list(kept(oldLabels, newLabels))} → ${list(kept(newLabels, oldLabels))}`));
    const described = now.levels
      .filter((level) => {
        const old = was.levels.find((candidate) => levelName(candidate) === levelName(level));
        return old !== undefined && !same(old, level);
      })
      .map(levelName);
    if (described.length > 0) items.push(changed(`descriptions changed of levels ${list(described)}`));
  }
  if (was.kind === 'probability' && now.kind === 'probability') {
    if (!same(was.criterion, now.criterion)) items.push(changed('criterion changed'));
    if (was.threshold !== now.threshold) items.push(changed(`threshold ${shown(was.threshold)} → ${shown(now.threshold)}`));
  }
  return items;
}

function levelName(level: ScoreLevel): string {
  return typeof level === 'string' ? level : level.label;
}

// ---- composites --------------------------------------------------------------------------------------------

function termName(term: Composite['terms'][number]): string {
  return term.option === undefined ? `\`${term.question}\`` : `\`${term.question}\` = ${term.option}`;
}

function compositeItems(before: Composite[], after: Composite[]): ReviewItem[] {
  const items: ReviewItem[] = [];
  const old = new Map(before.map((composite) => [composite.key, composite]));
  for (const composite of after) {
    const name = `Composite \`${composite.key}\``;
    const was = old.get(composite.key);
    if (!was) {
      items.push(item('composites', 'added', composite.key, `${name} added: ${composite.terms.map((t) => `${t.weight} × ${termName(t)}`).join(' + ')}`));
      continue;
    }
    const changed = (text: string) => item('composites', 'changed', composite.key, `${name}: ${text}`);
    if (was.description !== composite.description) items.push(changed('description changed'));
    const oldTerms = new Map(was.terms.map((term) => [termName(term), term]));
    const newTerms = new Map(composite.terms.map((term) => [termName(term), term]));
    for (const [termKey, term] of newTerms) {
      const prior = oldTerms.get(termKey);
      if (!prior) items.push(changed(`term added: ${term.weight} × ${termKey}`));
      else if (prior.weight !== term.weight) items.push(changed(`weight of ${termKey} ${prior.weight} → ${term.weight}`));
    }
    for (const [termKey, term] of oldTerms) if (!newTerms.has(termKey)) items.push(changed(`term removed: ${term.weight} × ${termKey}`));
  }
  const next = new Set(after.map((composite) => composite.key));
  for (const composite of before)
    if (!next.has(composite.key)) items.push(item('composites', 'removed', composite.key, `Composite \`${composite.key}\` removed`));
  return items;
}

// ---- rules -------------------------------------------------------------------------------------------------

interface RulePairing {
  /** Old index → new index of rules left as they were (the common subsequence). */
  kept: Array<[number, number]>;
  moved: Array<[number, number]>;
  changed: Array<[number, number]>;
  added: number[];
  removed: number[];
}

/**
 * Pairs old and new rules: equal rules in a longest common subsequence are kept; an equal rule elsewhere moved;
 * of the rest, an old and a new rule between the same kept neighbours are the same rule edited, in order; what
 * is left was added or removed.
 */
export function pairRules(before: readonly Policy[], after: readonly Policy[]): RulePairing {
  const a = before.map(canonical);
  const b = after.map(canonical);
  const kept = longestCommonSubsequence(a, b);
  const oldFree = new Set(a.keys());
  const newFree = new Set(b.keys());
  for (const [i, j] of kept) {
    oldFree.delete(i);
    newFree.delete(j);
  }
  const moved: Array<[number, number]> = [];
  for (const i of [...oldFree]) {
    const j = [...newFree].find((candidate) => b[candidate] === a[i]);
    if (j === undefined) continue;
    moved.push([i, j]);
    oldFree.delete(i);
    newFree.delete(j);
  }
  const changed: Array<[number, number]> = [];
  const anchors: Array<[number, number]> = [[-1, -1], ...kept, [a.length, b.length]];
  for (let k = 0; k + 1 < anchors.length; k++) {
    const [i0, j0] = anchors[k]!;
    const [i1, j1] = anchors[k + 1]!;
    const olds = [...oldFree].filter((i) => i > i0 && i < i1).sort((x, y) => x - y);
    const news = [...newFree].filter((j) => j > j0 && j < j1).sort((x, y) => x - y);
    for (let n = 0; n < Math.min(olds.length, news.length); n++) {
      changed.push([olds[n]!, news[n]!]);
      oldFree.delete(olds[n]!);
      newFree.delete(news[n]!);
    }
  }
  return { kept, moved, changed, added: [...newFree].sort((x, y) => x - y), removed: [...oldFree].sort((x, y) => x - y) };
}

function ruleItems(before: Policy[], after: Policy[]): ReviewItem[] {
  const pairing = pairRules(before, after);
  const items: Array<{ at: number; item: ReviewItem }> = [];
  for (const j of pairing.added)
    items.push({ at: j, item: item('rules', 'added', `rule ${j + 1}`, `Rule added at position ${j + 1}: ${ruleText(after[j]!)}`) });
  for (const [i, j] of pairing.moved)
    items.push({ at: j, item: item('rules', 'moved', `rule ${j + 1}`, `Rule moved from position ${i + 1} to ${j + 1}: ${ruleText(after[j]!)}`) });
  for (const [i, j] of pairing.changed) items.push({ at: j, item: ruleChange(i, before[i]!, j, after[j]!) });
  for (const i of pairing.removed)
    items.push({ at: i - 0.5, item: item('rules', 'removed', `rule ${i + 1}`, `Rule removed from position ${i + 1}: ${ruleText(before[i]!)}`) });
  return items.sort((x, y) => x.at - y.at).map((entry) => entry.item);
}

function ruleChange(i: number, was: Policy, j: number, now: Policy): ReviewItem {
  const where = i === j ? `Rule ${j + 1}` : `Rule ${j + 1} (was rule ${i + 1})`;
  const oldConditions = [was.when, ...was.and].map(conditionText);
  const newConditions = [now.when, ...now.and].map(conditionText);
  const removed = oldConditions.filter((text) => !newConditions.includes(text));
  const added = newConditions.filter((text) => !oldConditions.includes(text));
  const parts: string[] = [];
  if (removed.length === 1 && added.length === 1) parts.push(`condition ${removed[0]} → ${added[0]}`);
  else {
    if (added.length > 0) parts.push(`conditions added: ${added.join(' and ')}`);
    if (removed.length > 0) parts.push(`conditions removed: ${removed.join(' and ')}`);
    if (added.length === 0 && removed.length === 0) parts.push(`conditions reordered: ${newConditions.join(' and ')}`);
  }
  if (was.action !== now.action) parts.push(`action ${was.action} → ${now.action}`);
  // With only the action changed, the conditions say which rule it is.
  const conditionsSame = removed.length === 0 && added.length === 0 && same(oldConditions, newConditions);
  const text = conditionsSame ? `${where}, when ${newConditions.join(' and ')}: action ${was.action} → ${now.action}` : `${where}: ${parts.join('; ')}`;
  return item('rules', 'changed', `rule ${j + 1}`, text);
}

// ---- destinations ------------------------------------------------------------------------------------------

const TEXT_FIELDS: Record<string, string> = {
  description: 'description',
  text: 'reply text',
  prompt: 'prompt',
  input: 'input',
  instructions: 'instructions',
  body: 'body',
};
const VALUE_FIELDS: Record<string, string> = {
  url: 'URL',
  method: 'method',
  function: 'function',
  model: 'model',
  maxTokens: 'maximum tokens',
  temperature: 'temperature',
  mode: 'mode',
};

function destinationShape(destination: NormalizedDestination): string {
  return 'url' in destination ? `${destination.type} to ${destination.url}` : destination.type;
}

function destinationItems(before: NormalizedDestination[], after: NormalizedDestination[]): ReviewItem[] {
  const items: ReviewItem[] = [];
  const old = new Map(before.map((destination) => [destination.key, destination]));
  for (const destination of after) {
    const name = `Destination ${destination.key}`;
    const was = old.get(destination.key);
    if (!was) {
      items.push(item('destinations', 'added', destination.key, `${name} added (${destinationShape(destination)})`));
      continue;
    }
    items.push(...destinationChanges(name, was, destination));
  }
  const next = new Set(after.map((destination) => destination.key));
  for (const destination of before)
    if (!next.has(destination.key))
      items.push(item('destinations', 'removed', destination.key, `Destination ${destination.key} removed (${destinationShape(destination)})`));
  return items;
}

function destinationChanges(name: string, was: NormalizedDestination, now: NormalizedDestination): ReviewItem[] {
  const changed = (text: string) => item('destinations', 'changed', now.key, `${name}: ${text}`);
  if (was.type !== now.type) return [changed(`type ${destinationShape(was)} → ${destinationShape(now)}`)];
  const items: ReviewItem[] = [];
  const oldFields = was as unknown as Record<string, unknown>;
  const newFields = now as unknown as Record<string, unknown>;
  for (const [field, label] of Object.entries(VALUE_FIELDS))
    if (field in newFields && !same(oldFields[field], newFields[field]))
      items.push(changed(`${label} ${shown(oldFields[field])} → ${shown(newFields[field])}`));
  for (const [field, label] of Object.entries(TEXT_FIELDS))
    if (field in newFields && !same(oldFields[field], newFields[field])) items.push(changed(`${label} changed`));
  if ('timeoutMs' in was && 'timeoutMs' in now && was.timeoutMs !== now.timeoutMs)
    items.push(changed(`timeout ${seconds(was.timeoutMs)} → ${seconds(now.timeoutMs)}`));
  if ('buttons' in was && 'buttons' in now && !same(was.buttons, now.buttons))
    items.push(changed(`buttons ${list(was.buttons) || 'none'} → ${list(now.buttons) || 'none'}`));
  if ('tools' in was && 'tools' in now && !same(was.tools, now.tools)) items.push(changed(`tools ${list(was.tools) || 'none'} → ${list(now.tools) || 'none'}`));
  const oldWhen = was.when.map(conditionText);
  const newWhen = now.when.map(conditionText);
  if (!same(oldWhen, newWhen)) items.push(changed(`sent when ${oldWhen.join(' and ') || 'always'} → ${newWhen.join(' and ') || 'always'}`));
  // Header values may hold secret references: only names are said.
  items.push(...namedEntries('headers', was.headers, now.headers).map(changed));
  items.push(...namedEntries('params', was.params, now.params).map(changed));
  return items;
}

function namedEntries(label: string, before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const added = Object.keys(after).filter((key) => !Object.hasOwn(before, key));
  const removed = Object.keys(before).filter((key) => !Object.hasOwn(after, key));
  const changed = Object.keys(after).filter((key) => Object.hasOwn(before, key) && !same(before[key], after[key]));
  return [
    ...(added.length > 0 ? [`${label} added: ${list(added)}`] : []),
    ...(removed.length > 0 ? [`${label} removed: ${list(removed)}`] : []),
    ...(changed.length > 0 ? [`${label} changed: ${list(changed)}`] : []),
  ];
}

// ---- settings ----------------------------------------------------------------------------------------------

function settingItems(before: NormalizedSchema, after: NormalizedSchema): ReviewItem[] {
  const items: ReviewItem[] = [];
  const setting = (subject: string, text: string) => items.push(item('settings', 'changed', subject, `Setting ${text}`));
  const a: Settings = before.settings;
  const b: Settings = after.settings;
  if (a.engine !== b.engine) setting('engine', `engine: ${a.engine ?? 'workspace default'} → ${b.engine ?? 'workspace default'}`);
  if (a.model !== b.model) setting('model', `model: ${a.model ?? 'engine default'} → ${b.model ?? 'engine default'}`);
  if (a.timeoutMs !== b.timeoutMs) setting('timeoutMs', `timeout: ${seconds(a.timeoutMs)} → ${seconds(b.timeoutMs)}`);
  if (a.onEngineError !== b.onEngineError) setting('onEngineError', `on engine error: ${a.onEngineError} → ${b.onEngineError}`);
  if (a.storeInput !== b.storeInput) setting('storeInput', `keep inputs: ${onOff(a.storeInput)} → ${onOff(b.storeInput)}`);
  if (a.storeOutput !== b.storeOutput) setting('storeOutput', `keep answers: ${onOff(a.storeOutput)} → ${onOff(b.storeOutput)}`);
  if ((a.confidenceSource ?? 'model') !== (b.confidenceSource ?? 'model'))
    setting('confidenceSource', `confidence from: ${a.confidenceSource ?? 'model'} → ${b.confidenceSource ?? 'model'}`);
  if (!same(a.review ?? null, b.review ?? null)) setting('review', `review: ${reviewText(a.review)} → ${reviewText(b.review)}`);
  if (before.context !== after.context)
    items.push(
      item('settings', 'changed', 'context', before.context === null ? 'Context added' : after.context === null ? 'Context removed' : 'Context changed'),
    );
  if (!same(before.calibration ?? null, after.calibration ?? null))
    items.push(
      item(
        'settings',
        'changed',
        'calibration',
        after.calibration === undefined ? 'Calibration removed' : before.calibration === undefined ? 'Calibration added' : 'Calibration changed',
      ),
    );
  return items;
}

/** "off", or what sends a run to review: "escalate, low confidence, 2 % audited, due in 240 min". */
function reviewText(review: Settings['review']): string {
  if (review === undefined) return 'off';
  const parts: string[] = [...review.when.actions];
  if (review.when.lowConfidence) parts.push('low confidence');
  if (review.when.engineError) parts.push('engine errors');
  if (review.auditRate > 0) parts.push(`${formatNumber(Math.round(review.auditRate * 1e6) / 1e4)} % audited`);
  if (parts.length === 0) parts.push('nothing');
  return `${parts.join(', ')}, due in ${formatNumber(review.dueMinutes)} min`;
}

function item(area: ReviewArea, kind: ReviewItem['kind'], subject: string, text: string, breaking = false): ReviewItem {
  return { area, kind, subject, text, breaking };
}
