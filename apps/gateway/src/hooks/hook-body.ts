import { ServiceError } from '@ds/contracts';
import { bodyProblems, parseJsonBody } from '../http/json-body';

/** What a secret-URL call runs with: the run body `{ state }`. */
export interface HookRunBody {
  state: unknown;
}

function isTextPlain(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*text\/plain\s*(;|$)/i.test(contentType);
}

/**
 * The state of a secret-URL call from its body. `text/plain` is a text state as it is; any other content
 * type, or none, is read as JSON. A JSON object whose only key is `state` is unwrapped; anything else (an
 * object with other keys, an array, a string, a number) is the state itself.
 */
export function hookRunBody(contentType: string | undefined, raw: string | null): HookRunBody {
  if (raw === null || raw.length === 0) throw new ServiceError('INVALID_REQUEST', 'The request body is empty; send the state.');
  if (isTextPlain(contentType)) {
    const problems = bodyProblems(raw);
    if (problems.length > 0) throw new ServiceError('INVALID_REQUEST', 'The request body holds text that cannot be stored: U+0000.', problems);
    return { state: raw };
  }
  const value = parseJsonBody(raw);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === 'state') return value as HookRunBody;
  }
  return { state: value };
}
