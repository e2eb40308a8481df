import { z } from 'zod';
import { ServiceError, ValidationIssue } from '../errors';

/**
 * A request body checked against its schema: the parsed value, or INVALID_REQUEST in the spec's shape, with one
 * issue per problem (`path` dotted as the API names its fields, e.g. `answers.q1`) and `message` for the whole
 * body. An empty body and one that is not a JSON object are refused first, with the words every route uses.
 * The schemas write their own messages (`error` on each type and check), so what a caller reads is what the
 * hand-written checks said; unknown keys are refused only by schemas that are strict, as `unknownKey` words it.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, message: string, unknownKey = 'is not a known field'): z.output<S> {
  if (body === undefined || body === null) throw new ServiceError('INVALID_REQUEST', 'The request body is empty; send a JSON object.');
  if (typeof body !== 'object' || Array.isArray(body)) throw new ServiceError('INVALID_REQUEST', 'The request body must be a JSON object.');
  return parseValue(schema, body, message, unknownKey);
}

/** A value (a body already known to be an object, or one part of it) checked against its schema, as parseBody does. */
export function parseValue<S extends z.ZodType>(schema: S, value: unknown, message: string, unknownKey = 'is not a known field'): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  // ServiceError keeps the first ERROR_ISSUES_MAX issues and counts the rest in its message.
  throw new ServiceError('INVALID_REQUEST', message, bodyIssues(parsed.error, unknownKey));
}

/**
 * A zod failure as the spec's `details`: each unknown key its own issue, every other issue with its schema's
 * message, and one issue per path (the first), as the checks have always answered: zod can report a value twice,
 * an array given for a string both as the wrong type and as too short.
 */
export function bodyIssues(error: z.ZodError, unknownKey = 'is not a known field'): ValidationIssue[] {
  const seen = new Set<string>();
  return error.issues
    .flatMap((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ path: path === '' ? key : `${path}.${key}`, message: unknownKey }));
      return [{ path, message: issue.message }];
    })
    .filter((issue) => !seen.has(issue.path) && seen.add(issue.path));
}

/**
 * Text of `min` to `max` characters, one message for every way it can be wrong (missing, not a string, too
 * short or too long); `blank: false` also refuses text that is only white space. Characters are UTF-16 code units
 * (`String.length`), as the API has always counted them; zod's own min and max count code points.
 */
export function text(min: number, max: number, message: string, options: { blank?: boolean } = {}) {
  const fits = (value: string) => value.length >= min && value.length <= max && (options.blank !== false || value.trim().length > 0);
  return z.string({ error: message }).refine(fits, { error: message, abort: true }).meta({ minLength: min, maxLength: max });
}

/** A whole number from `min` to `max`, one message for every way it can be wrong, stopping at the first. */
export function wholeNumber(min: number, max: number, message: string) {
  return z.number({ error: message }).int({ error: message, abort: true }).min(min, { error: message, abort: true }).max(max, { error: message, abort: true });
}
