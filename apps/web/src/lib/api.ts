import type { BreakingChange, MissingSecret, VersionReview } from '@ds/decision-schema';
import type { EmbedPermission, Role } from './access';
import { local } from './storage';

/**
 * The application talks only to /app/v1. The session token travels in the Authorization header, never in a
 * cookie: a cross-site page cannot make the browser attach it, so no request can be forged (no CSRF token needed).
 * Embedded in a partner's page, the application has no token: the embed session's HttpOnly cookie authenticates,
 * and the gateway refuses state-changing requests it carries unless they come from the application's own pages.
 */
const TOKEN_KEY = 'ds.session';

/** Set once the embed session answered: calls then go without a bearer header, so the cookie decides. */
let embedded = false;

export function authenticateWithEmbedCookie(): void {
  embedded = true;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly details: unknown,
  ) {
    super(message);
  }

  /** Issues the API attached (details as a list of { path, message }), if any. */
  get issues(): Array<{ path: string; message: string }> {
    return Array.isArray(this.details) ? (this.details as Array<{ path: string; message: string }>) : [];
  }
}

export const session = {
  get token(): string | null {
    return local.getItem(TOKEN_KEY);
  },
  set(token: string | null): void {
    if (token === null) local.removeItem(TOKEN_KEY);
    else local.setItem(TOKEN_KEY, token);
  },
};

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = embedded ? null : session.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let reply: Response;
  try {
    reply = await fetch(`/app/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service could not be reached.', null, null);
  }
  const requestId = reply.headers.get('x-request-id');
  if (reply.status === 204) return undefined as T;
  const text = await reply.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!reply.ok) {
    const error = parsed?.error;
    if (reply.status === 401 && token) window.dispatchEvent(new Event('ds:signed-out'));
    if (reply.status === 401 && embedded) window.dispatchEvent(new Event('ds:embed-ended'));
    throw new ApiError(
      reply.status,
      error?.code ?? 'HTTP_' + reply.status,
      error?.message ?? reply.statusText,
      error?.request_id ?? requestId,
      error?.details ?? null,
    );
  }
  return parsed as T;
}

export interface Workspace {
  id: string;
  name: string;
  role: Role;
  /** Only in an embed session, which holds permissions rather than a role. */
  permissions?: EmbedPermission[];
}

/** `GET /app/v1/embed/session`: the live embed session, as the application needs it. */
export interface EmbedSessionView {
  id: string;
  workspace_id: string;
  user: { id: string; name: string | null; email: string | null };
  permissions: string[];
  origins: string[];
  start_path: string;
  locale: string | null;
  theme: string | null;
  expires_at: string;
}

export interface DecisionSummary {
  id: string;
  slug: string;
  name: string;
  status: 'draft' | 'deployed';
  active_version: number | null;
  endpoint_enabled: boolean;
}

/** What deploying the draft, or rolling back to `to`, changes against the active version (`from`). */
/** A deploy, a rollback or a promoted shadow: the version now active and what it breaks for callers of the one it replaced. */
export interface DeployedReply {
  version: number;
  breaking: BreakingChange[];
}

export interface ReviewReply {
  from: number | null;
  to: number | null;
  review: VersionReview | null;
  missing_secrets: MissingSecret[] | null;
}

export interface DecisionDetails extends DecisionSummary {
  description: string | null;
  revision: number;
  draft: unknown;
  active_schema: unknown;
  versions: number[];
  updated_at: string;
}
