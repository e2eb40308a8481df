import { randomAlphanumeric } from '@ds/ids';
import { InvalidRequest } from './invalid-request';

/** What the simulator does with one matching provider request instead of (or on top of) a plain answer. */
export interface Step {
  /** ≥ 400 answers with the provider's error body; below that, the answer itself carries this status. */
  status?: number;
  headers?: Record<string, string>;
  /** Seconds, sent as `Retry-After`. */
  retryAfter?: number;
  /** Wait before answering; combines with every other field. */
  delayMs?: number;
  /** Destroy the socket without answering, as a crashed upstream or a reset connection does. */
  drop?: boolean;
  /** 200 whose content is not JSON. */
  malformed?: boolean;
  /** 200 without the first question of the schema. */
  incomplete?: boolean;
  /** 200 with an outcome the schema does not list. */
  unknownOutcome?: boolean;
  /** Distributions used as given, by question key; questions not named here are answered as usual. */
  answers?: Record<string, Record<string, number>>;
  /** The model reported, exactly as given. */
  model?: string;
  /** Message of the error body of a `status` ≥ 400 step. */
  errorMessage?: string;
  /** The answer's text, for a request that asks for free text. */
  text?: string;
}

export interface ScriptInput {
  /** Applies to provider requests whose raw body contains this text ("" matches every request). */
  match: string;
  steps: Step[];
  /** Repeat the last step forever instead of going back to plain answers after it. */
  repeat?: boolean;
}

interface Script {
  id: string;
  match: string;
  steps: Step[];
  repeat: boolean;
  next: number;
}

type Check = { test: (value: unknown) => boolean; expected: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNonNegative = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
const isBoolean = (value: unknown) => typeof value === 'boolean';
const isDistribution = (value: unknown) => isRecord(value) && Object.values(value).every((p) => typeof p === 'number' && Number.isFinite(p));

// Typed over every key of Step, so a new field cannot be added without saying how it is validated.
const STEP_FIELDS: Record<keyof Step, Check> = {
  status: { test: (v) => Number.isInteger(v) && (v as number) >= 200 && (v as number) <= 599, expected: 'an integer from 200 to 599' },
  headers: { test: (v) => isRecord(v) && Object.values(v).every((h) => typeof h === 'string'), expected: 'an object of strings' },
  retryAfter: { test: isNonNegative, expected: 'a non-negative number of seconds' },
  delayMs: { test: isNonNegative, expected: 'a non-negative number of milliseconds' },
  drop: { test: isBoolean, expected: 'a boolean' },
  malformed: { test: isBoolean, expected: 'a boolean' },
  incomplete: { test: isBoolean, expected: 'a boolean' },
  unknownOutcome: { test: isBoolean, expected: 'a boolean' },
  answers: { test: (v) => isRecord(v) && Object.values(v).every(isDistribution), expected: 'an object of {outcome: number} objects' },
  model: { test: (v) => typeof v === 'string' && v.length > 0, expected: 'a non-empty string' },
  errorMessage: { test: (v) => typeof v === 'string', expected: 'a string' },
  text: { test: (v) => typeof v === 'string', expected: 'a string' },
};

/**
 * Validates a script sent to the control API. Unknown step fields are refused rather than
 * ignored, so a typo such as `retry_after` fails the test that wrote it instead of passing silently.
 */
export function parseScript(body: unknown): ScriptInput {
  if (!isRecord(body)) throw new InvalidRequest('the script must be a JSON object');
  const { match, steps, repeat } = body;
  if (typeof match !== 'string') throw new InvalidRequest('match must be a string');
  if (!Array.isArray(steps) || steps.length === 0) throw new InvalidRequest('steps must be a non-empty array');
  if (repeat !== undefined && typeof repeat !== 'boolean') throw new InvalidRequest('repeat must be a boolean');
  for (const key of Object.keys(body)) {
    if (!['match', 'steps', 'repeat'].includes(key)) throw new InvalidRequest(`unknown script field ${key}`);
  }
  steps.forEach((step: unknown, i) => {
    if (!isRecord(step)) throw new InvalidRequest(`steps[${i}] must be an object`);
    for (const [field, value] of Object.entries(step)) {
      const check = Object.hasOwn(STEP_FIELDS, field) ? (STEP_FIELDS as Record<string, Check>)[field] : undefined;
      if (!check) throw new InvalidRequest(`steps[${i}] has an unknown field ${field}`);
      if (!check.test(value)) throw new InvalidRequest(`steps[${i}].${field} must be ${check.expected}`);
    }
  });
  return { match, steps: steps as Step[], repeat };
}

/** The active scripts; a script leaves the book once its last step is used (unless it repeats). */
export class ScriptBook {
  private scripts: Script[] = [];

  add(input: ScriptInput): string {
    const id = `scr_${randomAlphanumeric(20)}`;
    this.scripts.push({ id, match: input.match, steps: input.steps, repeat: input.repeat ?? false, next: 0 });
    return id;
  }

  /** Uses up the step due for this request, from the most recently added script whose match it contains. */
  take(rawBody: string): Step | undefined {
    for (let i = this.scripts.length - 1; i >= 0; i--) {
      const script = this.scripts[i]!;
      if (!rawBody.includes(script.match)) continue;
      const step = script.steps[script.next];
      if (script.next < script.steps.length - 1) script.next++;
      else if (!script.repeat) this.scripts.splice(i, 1);
      return step;
    }
    return undefined;
  }

  /** Removes the scripts whose match contains `match` (every script when it is absent); returns how many. */
  remove(match?: string): number {
    const before = this.scripts.length;
    this.scripts = match === undefined ? [] : this.scripts.filter((s) => !s.match.includes(match));
    return before - this.scripts.length;
  }
}
