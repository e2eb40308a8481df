// What a new version changes for the callers of a decision: its public contract, field by field, and which of those
// changes break a call that works today. The deploy, rollback and promote answers, the review and the version
// history all report them from here; the web application shows the lists the API returns.
import { decisionContract } from './contract';
import { type Change, jsonDiff } from './json-diff';
import type { NormalizedSchema, StateField } from './schema-types';

/** What a version's callers see change: the contract of `after` against the one of `before` (null before a first deploy). */
export function contractChanges(before: NormalizedSchema | null, after: NormalizedSchema): Change[] {
  return jsonDiff(before === null ? null : contractBody(before), contractBody(after));
}

function contractBody(schema: NormalizedSchema): unknown {
  const { slug: _slug, status: _status, version: _version, ...rest } = decisionContract({ slug: '', status: '', version: 0, schema });
  return rest;
}

/**
 * A change between the active version and the draft that makes a call that works today fail or read differently
 * once deployed: a state the new version refuses, or an answer the caller no longer gets.
 */
export interface BreakingChange {
  kind:
    | 'stateType'
    | 'listItems'
    | 'fieldAdded'
    | 'fieldRequired'
    | 'fieldRemoved'
    | 'fieldType'
    | 'enumAdded'
    | 'enumNarrowed'
    | 'questionRemoved'
    | 'questionKind'
    | 'optionRemoved'
    | 'levelRemoved';
  /** The state field, question, option or level concerned, as callers name it. */
  subject: string;
  /** The values no longer accepted (enumNarrowed), when there are any to name. */
  values?: string[];
}

export function breakingChanges(active: NormalizedSchema, draft: NormalizedSchema): BreakingChange[] {
  return [...stateChanges(active.state, draft.state), ...questionChanges(active, draft)];
}

function stateChanges(before: NormalizedSchema['state'], after: NormalizedSchema['state']): BreakingChange[] {
  if (before.type !== after.type) return [{ kind: 'stateType', subject: `${before.type} → ${after.type}` }];
  if (before.type === 'list' && after.type === 'list')
    return before.items === after.items ? [] : [{ kind: 'listItems', subject: `${before.items} → ${after.items}` }];
  if (before.type !== 'object' || after.type !== 'object') return [];
  return fieldsChanges('', before.fields, after.fields);
}

/** Sub-fields are named by their dotted path (`address.street`), as the state check names them. */
function fieldsChanges(prefix: string, before: Record<string, StateField>, after: Record<string, StateField>): BreakingChange[] {
  const changes: BreakingChange[] = [];
  for (const [name, field] of Object.entries(after)) {
    const old = Object.prototype.hasOwnProperty.call(before, name) ? before[name] : undefined;
    if (!old) {
      if (field.required) changes.push({ kind: 'fieldAdded', subject: `${prefix}${name}` });
      continue;
    }
    changes.push(...fieldChanges(`${prefix}${name}`, old, field));
  }
  for (const name of Object.keys(before)) if (!(name in after)) changes.push({ kind: 'fieldRemoved', subject: `${prefix}${name}` });
  return changes;
}

function fieldChanges(name: string, before: StateField, after: StateField): BreakingChange[] {
  if (before.type !== after.type) return [{ kind: 'fieldType', subject: `${name}: ${before.type} → ${after.type}` }];
  const changes: BreakingChange[] = [];
  if (after.required && !before.required) changes.push({ kind: 'fieldRequired', subject: name });
  if (after.enum && !before.enum) changes.push({ kind: 'enumAdded', subject: name });
  if (after.enum && before.enum) {
    const dropped = before.enum.filter((value) => !after.enum!.includes(value));
    if (dropped.length > 0) changes.push({ kind: 'enumNarrowed', subject: name, values: dropped });
  }
  changes.push(...fieldsChanges(`${name}.`, before.fields ?? {}, after.fields ?? {}));
  return changes;
}

function questionChanges(active: NormalizedSchema, draft: NormalizedSchema): BreakingChange[] {
  const changes: BreakingChange[] = [];
  const next = new Map(draft.questions.map((question) => [question.key, question]));
  for (const question of active.questions) {
    const now = next.get(question.key);
    if (!now) {
      changes.push({ kind: 'questionRemoved', subject: question.key });
      continue;
    }
    if (now.kind !== question.kind) {
      changes.push({ kind: 'questionKind', subject: `${question.key}: ${question.kind} → ${now.kind}` });
      continue;
    }
    if (question.kind === 'choice' && now.kind === 'choice') {
      const values = new Set(now.options.map((option) => option.value));
      for (const option of question.options) if (!values.has(option.value)) changes.push({ kind: 'optionRemoved', subject: `${question.key}.${option.value}` });
    }
    if (question.kind === 'score' && now.kind === 'score') {
      const labels = new Set(now.levels.map(levelName));
      for (const level of question.levels)
        if (!labels.has(levelName(level))) changes.push({ kind: 'levelRemoved', subject: `${question.key}.${levelName(level)}` });
    }
  }
  return changes;
}

function levelName(level: string | { label: string }): string {
  return typeof level === 'string' ? level : level.label;
}
