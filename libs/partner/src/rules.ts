import { z } from 'zod';
import {
  bodyIssues,
  EMBED_REVOKE_BODY,
  EMBED_SESSION_BODY,
  EXTERNAL_ID_PATTERN,
  isLocalDevelopmentOrigin,
  PARTNER_SETTINGS_BODY,
  storableTimestamp,
  SUB_WORKSPACE_CREATE_BODY,
  SUB_WORKSPACE_UPDATE_BODY,
  type EmbedPermission,
  type PlanName,
  type PlanView,
  type ValidationIssue,
} from '@ds/contracts';

// The partner API's request bodies are schemas in @ds/contracts (their limits and word lists with them); these are
// the rules around them: references, limits against the partner's plan, origins, paging.
export {
  DEFAULT_START_PATH,
  EMBED_LOCALES,
  EMBED_PERMISSIONS,
  EMBED_THEMES,
  EXTERNAL_ID_PATTERN,
  isLocalDevelopmentOrigin,
  isValidStartPath,
  MAX_ALLOWED_ORIGINS,
  MAX_METADATA_KEY,
  MAX_METADATA_PAIRS,
  MAX_METADATA_VALUE,
  MAX_SEED_DECISIONS,
  MAX_USER_EMAIL,
  MAX_USER_ID,
  MAX_USER_NAME,
  normalizeOrigin,
  parseRef,
  TTL_DEFAULT_SECONDS,
  TTL_MAX_SECONDS,
  TTL_MIN_SECONDS,
  type SubWorkspaceRef,
} from '@ds/contracts';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The spec: the launch URL must be loaded within 60 seconds. */
export const LAUNCH_TTL_SECONDS = 60;

/**
 * Sub-workspaces a partner's plan allows (402 `PLAN_LIMIT_REACHED`, `scope: "workspaces"`, past it); null is
 * unlimited. The spec names the error but not the counts: these mirror the plans' decision counts in spirit.
 */
export const SUB_WORKSPACES_PER_PLAN: Record<PlanName, number | null> = {
  genesis: 3,
  developer: 100,
  growth: 10_000,
  enterprise: null,
};

export interface Limits {
  max_decisions: number | null;
  monthly_decisions: number | null;
}

export interface SubWorkspaceFields {
  external_id?: string;
  name?: string;
  metadata?: Record<string, string>;
  /** Only the limits named in the request; an absent key keeps its value on update. */
  limits?: Partial<Limits>;
  seed?: { decisions: string[]; deploy: boolean };
}

/** The issues of a zod failure, each path under `prefix` (an embed session's `workspace.`). */
function issuesOf(error: z.ZodError, prefix: string): ValidationIssue[] {
  return bodyIssues(error).map((issue) => ({ path: `${prefix}${issue.path}`, message: issue.message }));
}

/**
 * The fields of a sub-workspace as `mode` allows them: `create` needs `external_id` and `name` and accepts
 * `seed`; `update` (PATCH) accepts only `name`, `metadata` and `limits`. Unknown fields are ignored.
 */
export function checkSubWorkspace(
  body: Record<string, unknown>,
  mode: 'create' | 'update',
  prefix = '',
): { fields: SubWorkspaceFields; issues: ValidationIssue[] } {
  const parsed = (mode === 'create' ? SUB_WORKSPACE_CREATE_BODY : SUB_WORKSPACE_UPDATE_BODY).safeParse(body);
  if (!parsed.success) return { fields: {}, issues: issuesOf(parsed.error, prefix) };
  const fields: SubWorkspaceFields = {};
  for (const [key, value] of Object.entries(parsed.data)) if (value !== undefined) Object.assign(fields, { [key]: value });
  return { fields, issues: [] };
}

/**
 * Limits named in a request that the partner's own plan (with its overrides) does not allow: a sub-workspace never
 * holds more decisions, nor runs more a month, than its partner may.
 */
export function limitsAbovePlan(
  limits: Partial<Limits> | undefined,
  plan: Pick<PlanView, 'max_decisions' | 'included_decisions'>,
  prefix = '',
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const ceilings: Record<keyof Limits, number | null> = { max_decisions: plan.max_decisions, monthly_decisions: plan.included_decisions };
  for (const key of ['max_decisions', 'monthly_decisions'] as const) {
    const value = limits?.[key];
    const ceiling = ceilings[key];
    if (typeof value === 'number' && ceiling !== null && value > ceiling) {
      issues.push({ path: `${prefix}limits.${key}`, message: `must be at most ${ceiling}, what the partner's plan allows` });
    }
  }
  return issues;
}

/**
 * The sub-workspace's plan overrides: everything the partner's effective plan holds (its overrides included), its
 * decision counts narrowed to the sub-workspace's own limits. A partner's plan shrunk since a limit was set narrows
 * the sub-workspace with it; a monthly limit is a hard cap.
 */
export function subWorkspaceOverrides(plan: PlanView, limits: Limits): Record<string, unknown> {
  const lower = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
  return {
    included_decisions: lower(plan.included_decisions, limits.monthly_decisions),
    max_decisions: lower(plan.max_decisions, limits.max_decisions),
    rate_limit_per_minute: plan.rate_limit_per_minute,
    hard_cap: plan.hard_cap || limits.monthly_decisions !== null,
    price_per_million_cents: plan.price_per_million_cents,
  };
}

/** The operator's partner switch: `enabled` (boolean) and `allowed_origins` (list of origins). */
export function checkPartnerSettings(body: Record<string, unknown>): {
  settings: { enabled: boolean; allowedOrigins: string[] } | null;
  issues: ValidationIssue[];
} {
  const parsed = PARTNER_SETTINGS_BODY.safeParse(body);
  return parsed.success ? { settings: parsed.data, issues: [] } : { settings: null, issues: issuesOf(parsed.error, '') };
}

export interface EmbedFields {
  /** A reference (string) or the fields of a sub-workspace to create or update on the fly. */
  workspace: { ref: string } | { create: Record<string, unknown> };
  user: { id: string; name: string | null; email: string | null };
  permissions: EmbedPermission[];
  startPath: string;
  /** Requested origins; null: all the partner's allowed origins. */
  origins: string[] | null;
  locale: string | null;
  theme: string | null;
  ttlSeconds: number;
}

/** The embed-session request's own rules (origins are checked against the partner's list by `resolveOrigins`). */
export function checkEmbedSession(body: Record<string, unknown>): { fields: EmbedFields | null; issues: ValidationIssue[] } {
  const parsed = EMBED_SESSION_BODY.safeParse(body);
  if (!parsed.success) return { fields: null, issues: issuesOf(parsed.error, '') };
  const { workspace, user, permissions, start_path: startPath, origins, locale, theme, ttl_seconds: ttlSeconds } = parsed.data;
  return {
    fields: {
      workspace,
      user: { id: user.id, name: user.name ?? null, email: user.email ?? null },
      permissions,
      startPath,
      origins: origins ?? null,
      locale: locale ?? null,
      theme: theme ?? null,
      ttlSeconds,
    },
    issues: [],
  };
}

/**
 * The session's origins: the requested ones, each among the partner's allowed origins (a test key may also use a
 * local development origin), or all allowed origins when none were requested. Answers the issues otherwise.
 */
export function resolveOrigins(requested: string[] | null, allowed: string[], livemode: boolean): { origins: string[]; issues: ValidationIssue[] } {
  if (requested === null) {
    if (allowed.length === 0) return { origins: [], issues: [{ path: 'origins', message: 'the partner has no allowed origins; the operator sets them' }] };
    return { origins: [...allowed], issues: [] };
  }
  const issues: ValidationIssue[] = [];
  requested.forEach((origin, index) => {
    if (allowed.includes(origin)) return;
    if (!livemode && isLocalDevelopmentOrigin(origin)) return;
    issues.push({ path: `origins.${index}`, message: 'is not among the partner’s allowed origins' });
  });
  return { origins: issues.length === 0 ? requested : [], issues };
}

/** `Content-Security-Policy` of a launch and of every page of its session: framed by the session's origins only. */
export function frameAncestors(origins: readonly string[]): string {
  return `frame-ancestors ${origins.length > 0 ? origins.join(' ') : "'none'"}`;
}

/** Paging of `GET /v1/workspaces`: `limit` 1..100 (default 20), an opaque `cursor`, an `external_id` filter. */
export function checkListQuery(query: Record<string, unknown>): {
  limit: number;
  after: { createdAt: string; id: string } | null;
  externalId: string | null;
  issues: ValidationIssue[];
} {
  const issues: ValidationIssue[] = [];
  let limit = 20;
  if (query.limit !== undefined) {
    limit = typeof query.limit === 'string' && /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= 100)) issues.push({ path: 'limit', message: 'must be an integer from 1 to 100' });
  }
  let after: { createdAt: string; id: string } | null = null;
  if (query.cursor !== undefined) {
    after = decodeCursor(query.cursor);
    if (after === null) issues.push({ path: 'cursor', message: 'is not a valid cursor' });
  }
  let externalId: string | null = null;
  if (query.external_id !== undefined) {
    if (typeof query.external_id !== 'string' || !EXTERNAL_ID_PATTERN.test(query.external_id))
      issues.push({ path: 'external_id', message: 'must be 1 to 128 characters from A-Za-z0-9._:-' });
    else externalId = query.external_id;
  }
  return { limit, after, externalId, issues };
}

export function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

export function decodeCursor(cursor: unknown): { createdAt: string; id: string } | null {
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 200) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [createdAt, id] = value as unknown[];
    const at = storableTimestamp(createdAt);
    if (at === null || typeof id !== 'string' || !UUID_PATTERN.test(id)) return null;
    // The instant in the one spelling PostgreSQL reads, whatever spelling the cursor carried.
    return { createdAt: at.toISOString(), id };
  } catch {
    return null;
  }
}

/** The revoke request: a sub-workspace reference and/or one of the partner's user ids; at least one. */
export function checkRevoke(body: Record<string, unknown>): { workspace: string | null; userId: string | null; issues: ValidationIssue[] } {
  const parsed = EMBED_REVOKE_BODY.safeParse(body);
  return parsed.success ? { ...parsed.data, issues: [] } : { workspace: null, userId: null, issues: issuesOf(parsed.error, '') };
}
