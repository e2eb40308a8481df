/** Every public error code with the HTTP status the spec gives it. Services throw these; the gateway only maps. */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  PAYLOAD_TOO_LARGE: 413,
  INVALID_API_KEY: 401,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  DECISION_NOT_FOUND: 404,
  DECISION_NOT_DEPLOYED: 409,
  DECISION_DISABLED: 409,
  INVALID_STATE: 422,
  INVALID_SCHEMA: 422,
  IDEMPOTENCY_CONFLICT: 409,
  RATE_LIMITED: 429,
  CREDITS_EXHAUSTED: 402,
  SPEND_CAP_REACHED: 402,
  QUOTA_EXCEEDED: 402,
  PLAN_LIMIT_REACHED: 402,
  PAYMENT_FAILED: 402,
  BILLING_NOT_CONFIGURED: 503,
  BILLING_PROVIDER_ERROR: 502,
  WORKSPACE_NOT_FOUND: 404,
  ENGINE_NOT_CONFIGURED: 424,
  ENGINE_TIMEOUT: 504,
  ENGINE_RATE_LIMITED: 503,
  ENGINE_UNAVAILABLE: 503,
  ENGINE_INVALID_REQUEST: 502,
  ENGINE_AUTH_FAILED: 502,
  ENGINE_ERROR: 502,
  /** Ours: a service behind the gateway is unreachable or did not answer in time; sent with `Retry-After`. */
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One problem with a request field, as the spec's `details` array carries it: where it is, and what is wrong. */
export interface ValidationIssue {
  path: string;
  message: string;
}

export type ErrorDetails = Record<string, unknown> | ValidationIssue[];

/** The error as it travels over NATS and as the gateway renders it (plus request_id). */
export interface WireError {
  code: ErrorCode;
  status: number;
  message: string;
  details?: ErrorDetails;
  /** For the service that made the call, never for clients: the public body leaves it out. */
  internal?: ErrorInternals;
}

/** What a failed call had settled before it failed, for its caller's own records. */
export interface ErrorInternals {
  /** The engine and model an engine call was routed to. */
  engine?: 'llm' | 'checkpoint';
  model?: string;
}

/**
 * How much of a refusal an error carries, whatever the input it refuses: `details` lists at most
 * ERROR_ISSUES_MAX issues (the message says how many more there were), and every text is cut to a bound, so that
 * an error stays a few kilobytes even for a body of thousands of bad keys or one key of 100 KB, and always fits
 * the message bus between the services.
 */
export const ERROR_ISSUES_MAX = 50;
/** Characters of an error's `message`, the sentence counting the issues not listed included. */
export const ERROR_MESSAGE_MAX_CHARS = 1_000;
/** Characters of an issue's `path`: the paths of the API's own fields are far shorter; a hostile key is cut. */
export const ERROR_ISSUE_PATH_MAX_CHARS = 200;
/** Characters of an issue's `message`. */
export const ERROR_ISSUE_MESSAGE_MAX_CHARS = 300;

/** What marks a cut text: the caller sees that there was more. */
const CUT_MARK = '…';

/** `text` if it is at most `max` characters, else its first characters and `…`, `max` in all; never half a surrogate pair. */
export function boundedText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - CUT_MARK.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end) + CUT_MARK;
}

/** The message and details an error carries: issues past ERROR_ISSUES_MAX counted in the message, every text bounded. */
export function boundedErrorContent(
  message: string,
  details: ErrorDetails | undefined,
): { message: string; details: ErrorDetails | undefined; issuesNotListed: number } {
  if (!Array.isArray(details)) return { message: boundedText(message, ERROR_MESSAGE_MAX_CHARS), details, issuesNotListed: 0 };
  const { listed, notListed: issuesNotListed } = boundedIssues(details);
  if (issuesNotListed === 0) return { message: boundedText(message, ERROR_MESSAGE_MAX_CHARS), details: listed, issuesNotListed };
  const count = ` The first ${ERROR_ISSUES_MAX} issues are listed in details; ${issuesNotListed.toLocaleString('en-US')} more are not.`;
  return { message: boundedText(message, ERROR_MESSAGE_MAX_CHARS - count.length) + count, details: listed, issuesNotListed };
}

/** The first ERROR_ISSUES_MAX issues, each bounded, and how many were left out: for any answer that lists issues. */
export function boundedIssues(issues: readonly ValidationIssue[]): { listed: ValidationIssue[]; notListed: number } {
  const listed = issues.slice(0, ERROR_ISSUES_MAX).map(boundedIssue);
  return { listed, notListed: issues.length - listed.length };
}

/** One issue as an error may carry it; an entry that arrived over the wire is taken as text whatever it held. */
function boundedIssue(issue: ValidationIssue): ValidationIssue {
  return {
    path: boundedText(typeof issue?.path === 'string' ? issue.path : '', ERROR_ISSUE_PATH_MAX_CHARS),
    message: boundedText(typeof issue?.message === 'string' ? issue.message : '', ERROR_ISSUE_MESSAGE_MAX_CHARS),
  };
}

export class ServiceError extends Error {
  readonly status: number;

  readonly details?: ErrorDetails;

  /** Issues left out of `details` (see ERROR_ISSUES_MAX); for the service's log, never for the caller. */
  readonly issuesNotListed: number;

  internal?: ErrorInternals;

  constructor(
    readonly code: ErrorCode,
    message: string,
    details?: ErrorDetails,
  ) {
    // Bounded where every error is made, so that no reply built from it, on the bus or to the caller, grows with the input.
    const bounded = boundedErrorContent(message, details);
    super(bounded.message);
    this.name = 'ServiceError';
    this.status = ERROR_STATUS[code];
    this.details = bounded.details;
    this.issuesNotListed = bounded.issuesNotListed;
  }

  toWire(): WireError {
    const wire: WireError = { code: this.code, status: this.status, message: this.message };
    if (this.details !== undefined) wire.details = this.details;
    if (this.internal !== undefined) wire.internal = this.internal;
    return wire;
  }

  static fromWire(wire: WireError): ServiceError {
    const error = new ServiceError(wire.code, wire.message, wire.details);
    if (wire.internal !== undefined && typeof wire.internal === 'object' && wire.internal !== null) error.internal = wire.internal;
    return error;
  }
}

export function isWireError(value: unknown): value is WireError {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<WireError>;
  return typeof candidate.code === 'string' && candidate.code in ERROR_STATUS && typeof candidate.message === 'string';
}

/** The public error body: `{ error: { code, message, request_id, details? } }`. */
export function errorBody(error: WireError, requestId: string): { error: Record<string, unknown> } {
  const body: Record<string, unknown> = { code: error.code, message: error.message, request_id: requestId };
  if (error.details !== undefined) body.details = error.details;
  return { error: body };
}
