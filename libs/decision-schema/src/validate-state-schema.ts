import {
  checkCount,
  claimUnique,
  expectArray,
  expectBoolean,
  expectKey,
  expectMap,
  expectObject,
  expectOneOf,
  expectRequired,
  expectString,
  isGiven,
} from './field-checks';
import type { Issues, Path } from './issues';
import { STATE_FIELD_DEPTH_MAX, STATE_FIELD_DESCRIPTION_MAX, STATE_FIELDS_MAX } from './limits';
import { LIST_ITEM_TYPES, STATE_FIELD_TYPES } from './schema-types';

/** The engine receives the decision's context under this key, beside the state's own fields. */
export const RESERVED_STATE_FIELD = 'decision_context';

const STATE_TYPES = ['object', 'text', 'list'] as const;

/**
 * Checks the state schema and answers the names an instruction may put in backticks:
 * the declared fields of an object state, or null when the state is not (or not clearly) an object state.
 */
export function validateStateSchema(value: unknown, path: Path, issues: Issues): ReadonlySet<string> | null {
  if (!isGiven(value)) {
    issues.add(path, 'is required');
    return null;
  }
  if (!expectObject(value, path, issues, ['type', 'fields', 'items'])) return null;
  if (!expectOneOf(value.type, STATE_TYPES, [...path, 'type'], issues)) return null;

  if (value.type !== 'list' && value.items !== undefined) issues.add([...path, 'items'], 'unknown property');
  if (value.type !== 'object' && value.fields !== undefined) issues.add([...path, 'fields'], 'unknown property');

  if (value.type === 'list') {
    if (expectRequired(value, 'items', path, issues)) expectOneOf(value.items, LIST_ITEM_TYPES, [...path, 'items'], issues);
    return null;
  }
  if (value.type === 'text') return null;
  if (!expectRequired(value, 'fields', path, issues)) return null;
  return validateFields(value.fields, [...path, 'fields'], issues);
}

function validateFields(fields: unknown, path: Path, issues: Issues, depth = 1): ReadonlySet<string> | null {
  if (!expectMap(fields, path, issues)) return null;
  const names = new Set<string>();
  const entries = Object.entries(fields);
  checkCount(entries.length, path, issues, { max: STATE_FIELDS_MAX, noun: 'fields' });
  for (const [name, field] of entries) {
    const fieldPath = [...path, name];
    if (expectKey(name, fieldPath, issues)) {
      if (depth === 1 && name === RESERVED_STATE_FIELD) issues.add(fieldPath, `"${RESERVED_STATE_FIELD}" is reserved for the decision's context`);
      else names.add(name);
    }
    validateField(field, fieldPath, issues, depth);
  }
  return names;
}

function validateField(field: unknown, path: Path, issues: Issues, depth: number): void {
  if (!expectObject(field, path, issues, ['type', 'description', 'required', 'enum', 'fields'])) return;
  const typeKnown = expectRequired(field, 'type', path, issues) && expectOneOf(field.type, STATE_FIELD_TYPES, [...path, 'type'], issues);
  if (isGiven(field.fields)) {
    if (typeKnown && field.type !== 'object') issues.add([...path, 'fields'], 'is only allowed on object fields');
    else if (depth >= STATE_FIELD_DEPTH_MAX) issues.add([...path, 'fields'], `state fields nest at most ${STATE_FIELD_DEPTH_MAX} levels deep`);
    else validateFields(field.fields, [...path, 'fields'], issues, depth + 1);
  }
  if (isGiven(field.description)) {
    expectString(field.description, [...path, 'description'], issues, { max: STATE_FIELD_DESCRIPTION_MAX });
  }
  if (isGiven(field.required)) expectBoolean(field.required, [...path, 'required'], issues);
  if (!isGiven(field.enum)) return;
  if (typeKnown && field.type !== 'string') {
    issues.add([...path, 'enum'], 'is only allowed on string fields');
    return;
  }
  if (!expectArray(field.enum, [...path, 'enum'], issues, { min: 1, max: Infinity, noun: 'value' })) return;
  const seen = new Set<string>();
  field.enum.forEach((item, index) => {
    if (expectString(item, [...path, 'enum', index], issues, { max: Infinity })) claimUnique(seen, item, [...path, 'enum', index], issues);
  });
}
