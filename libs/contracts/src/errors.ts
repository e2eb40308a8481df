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

export class ServiceError extends Error {
  readonly status: number;

  internal?: ErrorInternals;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = ERROR_STATUS[code];
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
