/**
 * A failed run as a record: its code, message and details read from the execution, and what the code means for
 * whoever called the decision. Every code a run can be recorded with has its own words; another code (a newer
 * service) is shown with the generic ones, never as raw JSON.
 */

/** Whose move it is: the caller's request, the decision's engine settings, the provider, or the service. */
export type FailureParty = 'caller' | 'settings' | 'provider' | 'service';

export const RECORDED_FAILURE_CODES = [
  'INVALID_STATE',
  'INVALID_REQUEST',
  'ENGINE_NOT_CONFIGURED',
  'ENGINE_TIMEOUT',
  'ENGINE_RATE_LIMITED',
  'ENGINE_UNAVAILABLE',
  'ENGINE_INVALID_REQUEST',
  'ENGINE_AUTH_FAILED',
  'ENGINE_ERROR',
  'SERVICE_UNAVAILABLE',
  'INTERNAL_ERROR',
] as const;

export type RecordedFailureCode = (typeof RECORDED_FAILURE_CODES)[number];

const PARTY: Record<RecordedFailureCode, FailureParty> = {
  INVALID_STATE: 'caller',
  INVALID_REQUEST: 'caller',
  ENGINE_NOT_CONFIGURED: 'settings',
  ENGINE_AUTH_FAILED: 'settings',
  ENGINE_INVALID_REQUEST: 'settings',
  ENGINE_TIMEOUT: 'provider',
  ENGINE_RATE_LIMITED: 'provider',
  ENGINE_UNAVAILABLE: 'provider',
  ENGINE_ERROR: 'provider',
  SERVICE_UNAVAILABLE: 'service',
  INTERNAL_ERROR: 'service',
};

/** Whether the caller may send the same request again and expect another outcome (the spec's "Retrying" table). */
const RETRYABLE: Record<RecordedFailureCode, boolean> = {
  INVALID_STATE: false,
  INVALID_REQUEST: false,
  ENGINE_NOT_CONFIGURED: false,
  ENGINE_AUTH_FAILED: false,
  ENGINE_INVALID_REQUEST: false,
  ENGINE_TIMEOUT: true,
  ENGINE_RATE_LIMITED: true,
  ENGINE_UNAVAILABLE: true,
  ENGINE_ERROR: true,
  SERVICE_UNAVAILABLE: true,
  INTERNAL_ERROR: true,
};

export interface FailureDetail {
  path: string;
  message: string;
}

export interface RecordedFailure {
  code: string;
  /** The code when it is one a run records, for its own words; null for any other. */
  known: RecordedFailureCode | null;
  message: string;
  party: FailureParty;
  retryable: boolean | null;
  /** Issues the record carries, each with the place it concerns. */
  details: FailureDetail[];
  /** Details recorded as named values rather than issues, each said as text. */
  facts: Array<[string, string]>;
}

export function isRecordedFailureCode(code: string): code is RecordedFailureCode {
  return (RECORDED_FAILURE_CODES as readonly string[]).includes(code);
}

/** Reads an execution's `error` as it is stored, whatever its shape, into what the page says. */
export function recordedFailure(error: unknown): RecordedFailure {
  const record = isObject(error) ? error : {};
  const code = typeof record.code === 'string' && record.code !== '' ? record.code : 'INTERNAL_ERROR';
  const known = isRecordedFailureCode(code) ? code : null;
  const message = typeof record.message === 'string' ? record.message : '';
  const details: FailureDetail[] = [];
  const facts: Array<[string, string]> = [];
  if (Array.isArray(record.details)) {
    for (const item of record.details) {
      if (isObject(item) && typeof item.message === 'string') details.push({ path: typeof item.path === 'string' ? item.path : '', message: item.message });
      else facts.push(['', plainText(item)]);
    }
  } else if (isObject(record.details)) {
    for (const [name, value] of Object.entries(record.details)) facts.push([name, plainText(value)]);
  }
  return { code, known, message, party: known ? PARTY[known] : 'service', retryable: known ? RETRYABLE[known] : null, details, facts };
}

/** A value in words: text as it is, numbers and booleans as written, lists joined, anything else as compact JSON. */
function plainText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value) && value.every((item) => typeof item !== 'object' || item === null)) return value.map(String).join(', ');
  return JSON.stringify(value) ?? '';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
