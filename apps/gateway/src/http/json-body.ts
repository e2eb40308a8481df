import { scan as scanForPrototypeKeys } from 'secure-json-parse';
import { ServiceError, ValidationIssue } from '@ds/contracts';

/**
 * Objects and arrays inside one another, the body itself counting as level 1. No state, schema or request
 * of the API comes near it (a decision schema is about 6 deep), and it keeps every later walk over the
 * body (fingerprints, serializers, the services' own checks) far from the call-stack limit.
 */
export const JSON_NESTING_MAX = 64;

/** Enough for a caller to find and fix every bad string; a hostile body could otherwise list thousands. */
export const JSON_BODY_PROBLEMS_MAX = 20;

/**
 * A JSON request body as the services can safely use and store it, or a 400 INVALID_REQUEST:
 * - not JSON (the parser's message in `details`);
 * - a `__proto__` key, or a `constructor` object holding `prototype`, anywhere: code that copies or merges
 *   such a value could change the prototype of every object in the process;
 * - nested deeper than JSON_NESTING_MAX;
 * - a string or property name PostgreSQL cannot store as text or jsonb: a lone UTF-16 surrogate (`"\ud800"`,
 *   which JSON may escape but UTF-8 cannot encode) or U+0000.
 * An empty body is `undefined`; whether a route needs one is the route's concern.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ServiceError('INVALID_REQUEST', 'The request body is not valid JSON.', [{ path: '', message: (error as Error).message }]);
  }
  // Parsed and then scanned (rather than secure-json-parse's parse, which throws a SyntaxError for both) so
  // that malformed JSON and a forbidden key answer different messages.
  if (value !== null && typeof value === 'object') {
    try {
      scanForPrototypeKeys(value, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      throw new ServiceError('INVALID_REQUEST', 'The request body uses a property name that is not allowed.', [
        { path: '', message: '"__proto__", and "constructor" holding "prototype", are not allowed as property names' },
      ]);
    }
  }
  const problems = bodyProblems(value);
  if (problems.length > 0) {
    const message = problems.some((problem) => problem.message.startsWith('nested'))
      ? `The request body is nested deeper than ${JSON_NESTING_MAX} levels.`
      : 'The request body holds text that cannot be stored: not well-formed Unicode, or U+0000.';
    throw new ServiceError('INVALID_REQUEST', message, problems);
  }
  return value;
}

/**
 * One pass over a parsed body with an explicit stack (never recursion, so no depth can overflow it), stopping
 * after JSON_BODY_PROBLEMS_MAX problems. A container past the nesting limit is reported and not entered.
 */
export function bodyProblems(root: unknown): ValidationIssue[] {
  const problems: ValidationIssue[] = [];
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: '', depth: 0 }];
  while (pending.length > 0 && problems.length < JSON_BODY_PROBLEMS_MAX) {
    const { value, path, depth } = pending.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) problems.push({ path, message: `is a string that ${problem}` });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth + 1 > JSON_NESTING_MAX) {
      problems.push({ path, message: `nested deeper than ${JSON_NESTING_MAX} levels of objects and arrays` });
      continue;
    }
    const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
    // Pushed in reverse so that items are visited in document order.
    for (const [key, item] of entries.reverse()) {
      const itemPath = path === '' ? printable(key) : `${path}.${printable(key)}`;
      pending.push({ value: item, path: itemPath, depth: depth + 1 });
      const keyProblem = textProblem(key);
      if (keyProblem) problems.push({ path: itemPath, message: `has a property name that ${keyProblem}` });
    }
  }
  return problems.slice(0, JSON_BODY_PROBLEMS_MAX);
}

// In a `u` regular expression a surrogate pair reads as one astral code point, so \p{Surrogate} matches only
// a surrogate that has no partner.
const LONE_SURROGATE = /\p{Surrogate}/u;
const LONE_SURROGATES = /\p{Surrogate}/gu;

function textProblem(text: string): string | null {
  if (LONE_SURROGATE.test(text)) return 'is not well-formed Unicode (a lone UTF-16 surrogate)';
  if (text.includes('\u0000')) return 'contains U+0000';
  return null;
}

/** A key as it can appear in an error: the bad parts replaced, as String.prototype.toWellFormed does. */
function printable(key: string): string {
  return key.replace(LONE_SURROGATES, '\ufffd').replaceAll('\u0000', '\ufffd');
}
