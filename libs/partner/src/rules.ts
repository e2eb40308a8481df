import { integerIssue, storableTimestamp, type EmbedPermission, type PlanName, type PlanView, type ValidationIssue } from '@ds/contracts';

export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export const MAX_METADATA_PAIRS = 20;
/** Stripe's metadata bounds, where the spec names only the count. */
export const MAX_METADATA_KEY = 40;
export const MAX_METADATA_VALUE = 500;
export const MAX_SEED_DECISIONS = 50;
export const MAX_ALLOWED_ORIGINS = 20;

export const EMBED_PERMISSIONS: readonly EmbedPermission[] = [
  'decisions:read',
  'decisions:write',
  'decisions:deploy',
  'decisions:delete',
  'executions:read',
  'agent',
];
export const EMBED_LOCALES = ['en', 'pt', 'es', 'ru', 'zh'] as const;
export const EMBED_THEMES = ['light', 'dark', 'system'] as const;
export const TTL_MIN_SECONDS = 300;
export const TTL_MAX_SECONDS = 43_200;
export const TTL_DEFAULT_SECONDS = 3_600;
/** The spec: the launch URL must be loaded within 60 seconds. */
export const LAUNCH_TTL_SECONDS = 60;
export const DEFAULT_START_PATH = '/decisions';
export const MAX_USER_ID = 128;
export const MAX_USER_NAME = 80;
export const MAX_USER_EMAIL = 254;

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

export type SubWorkspaceRef = { kind: 'id'; id: string } | { kind: 'external'; externalId: string };

/** `{ref}`: the sub-workspace's id (UUID form) or `ext:<external_id>`; anything else names nothing (null). */
export function parseRef(ref: unknown): SubWorkspaceRef | null {
  if (typeof ref !== 'string') return null;
  if (ref.startsWith('ext:')) {
    const externalId = ref.slice(4);
    return EXTERNAL_ID_PATTERN.test(externalId) ? { kind: 'external', externalId } : null;
  }
  return UUID_PATTERN.test(ref) ? { kind: 'id', id: ref.toLowerCase() } : null;
}

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

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The fields of a sub-workspace as `mode` allows them: `create` needs `external_id` and `name` and accepts
 * `seed`; `update` (PATCH) accepts only `name`, `metadata` and `limits`. Unknown fields are ignored.
 */
export function checkSubWorkspace(
  body: Record<string, unknown>,
  mode: 'create' | 'update',
  prefix = '',
): { fields: SubWorkspaceFields; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const fields: SubWorkspaceFields = {};
  const at = (name: string) => `${prefix}${name}`;
  if (mode === 'create') {
    if (typeof body.external_id !== 'string' || !EXTERNAL_ID_PATTERN.test(body.external_id)) {
      issues.push({ path: at('external_id'), message: 'is required: 1 to 128 characters from A-Za-z0-9._:-' });
    } else fields.external_id = body.external_id;
  }
  if (body.name !== undefined || mode === 'create') {
    if (typeof body.name !== 'string' || body.name.trim().length < 1 || [...body.name].length > 80)
      issues.push({ path: at('name'), message: 'must be 1 to 80 characters' });
    else fields.name = body.name;
  }
  if (body.metadata !== undefined) {
    const metadata = checkMetadata(body.metadata, at('metadata'), issues);
    if (metadata) fields.metadata = metadata;
  }
  if (body.limits !== undefined) {
    const limits = checkLimits(body.limits, at('limits'), issues);
    if (limits) fields.limits = limits;
  }
  if (body.seed !== undefined) {
    if (mode === 'update') issues.push({ path: at('seed'), message: 'is accepted on creation only' });
    else {
      const seed = checkSeed(body.seed, at('seed'), issues);
      if (seed) fields.seed = seed;
    }
  }
  return { fields, issues };
}

function checkMetadata(value: unknown, path: string, issues: ValidationIssue[]): Record<string, string> | null {
  if (!isObject(value)) {
    issues.push({ path, message: `must be an object of up to ${MAX_METADATA_PAIRS} string pairs` });
    return null;
  }
  const entries = Object.entries(value);
  const before = issues.length;
  if (entries.length > MAX_METADATA_PAIRS) issues.push({ path, message: `holds at most ${MAX_METADATA_PAIRS} pairs` });
  for (const [key, item] of entries) {
    if (key.length < 1 || key.length > MAX_METADATA_KEY) issues.push({ path: `${path}.${key}`, message: `keys are 1 to ${MAX_METADATA_KEY} characters` });
    else if (typeof item !== 'string' || item.length > MAX_METADATA_VALUE)
      issues.push({ path: `${path}.${key}`, message: `must be a string of up to ${MAX_METADATA_VALUE} characters` });
  }
  return issues.length === before ? (Object.fromEntries(entries) as Record<string, string>) : null;
}

function checkLimits(value: unknown, path: string, issues: ValidationIssue[]): Partial<Limits> | null {
  if (!isObject(value)) {
    issues.push({ path, message: 'must be an object with max_decisions and monthly_decisions' });
    return null;
  }
  const limits: Partial<Limits> = {};
  const before = issues.length;
  for (const [key, item] of Object.entries(value)) {
    if (key !== 'max_decisions' && key !== 'monthly_decisions') {
      issues.push({ path: `${path}.${key}`, message: 'unknown limit' });
      continue;
    }
    const issue = item === null ? null : integerIssue(item, `${path}.${key}`, 'integer', { min: 0 }, ', or null for the partner’s default');
    if (issue) {
      issues.push(issue);
      continue;
    }
    limits[key] = item as number | null;
  }
  return issues.length === before ? limits : null;
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

function checkSeed(value: unknown, path: string, issues: ValidationIssue[]): { decisions: string[]; deploy: boolean } | null {
  if (!isObject(value)) {
    issues.push({ path, message: 'must be an object { decisions: [slug, …], deploy: boolean }' });
    return null;
  }
  const before = issues.length;
  const decisions = value.decisions;
  if (!Array.isArray(decisions) || decisions.length > MAX_SEED_DECISIONS) {
    issues.push({ path: `${path}.decisions`, message: `must be a list of up to ${MAX_SEED_DECISIONS} slugs` });
  } else {
    decisions.forEach((slug, index) => {
      if (typeof slug !== 'string' || slug.length > 64 || !SLUG_PATTERN.test(slug))
        issues.push({ path: `${path}.decisions.${index}`, message: 'must be a decision slug' });
    });
  }
  if (value.deploy !== undefined && typeof value.deploy !== 'boolean') issues.push({ path: `${path}.deploy`, message: 'must be a boolean' });
  if (issues.length > before) return null;
  return { decisions: [...new Set(decisions as string[])], deploy: value.deploy === true };
}

/**
 * An origin as browsers send it: scheme, host and port, nothing else. Answers the serialised origin, or null.
 * Only https, except loopback development origins over http.
 */
export function normalizeOrigin(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return null;
  if (value.endsWith('/') && !value.endsWith('://')) return null;
  if (url.protocol === 'https:') return url.origin;
  if (url.protocol === 'http:' && isLocalDevelopmentOrigin(url.origin)) return url.origin;
  return null;
}

/** `http(s)://localhost`, `127.0.0.1` or `[::1]`, any port: what a developer's machine serves a host page from. */
export function isLocalDevelopmentOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}

/** The operator's partner switch: `enabled` (boolean) and `allowed_origins` (list of origins). */
export function checkPartnerSettings(body: Record<string, unknown>): {
  settings: { enabled: boolean; allowedOrigins: string[] } | null;
  issues: ValidationIssue[];
} {
  const issues: ValidationIssue[] = [];
  if (typeof body.enabled !== 'boolean') issues.push({ path: 'enabled', message: 'must be a boolean' });
  const origins: string[] = [];
  const raw = body.allowed_origins ?? [];
  if (!Array.isArray(raw) || raw.length > MAX_ALLOWED_ORIGINS)
    issues.push({ path: 'allowed_origins', message: `must be a list of up to ${MAX_ALLOWED_ORIGINS} origins` });
  else {
    raw.forEach((value, index) => {
      const origin = normalizeOrigin(value);
      if (origin === null) issues.push({ path: `allowed_origins.${index}`, message: 'must be an https origin (scheme, host and optional port, no path)' });
      else if (!origins.includes(origin)) origins.push(origin);
    });
  }
  return { settings: issues.length === 0 ? { enabled: body.enabled as boolean, allowedOrigins: origins } : null, issues };
}

const START_PATH_PATTERN = /^\/decisions(\/new|\/dec_[A-Za-z0-9]{20}(\/(editor|builder|playground|deploy|executions))?)?$/;

/** `/decisions`, `/decisions/new`, or `/decisions/{id}` optionally followed by one of the five views. */
export function isValidStartPath(value: unknown): value is string {
  return typeof value === 'string' && START_PATH_PATTERN.test(value);
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
  const issues: ValidationIssue[] = [];
  let workspace: EmbedFields['workspace'] | null = null;
  if (typeof body.workspace === 'string') {
    if (parseRef(body.workspace) === null)
      issues.push({ path: 'workspace', message: 'must be ext:<external_id>, a sub-workspace id, or an object that creates one' });
    else workspace = { ref: body.workspace };
  } else if (isObject(body.workspace)) {
    const { issues: workspaceIssues } = checkSubWorkspace(body.workspace, 'create', 'workspace.');
    issues.push(...workspaceIssues);
    workspace = { create: body.workspace };
  } else issues.push({ path: 'workspace', message: 'is required: ext:<external_id>, a sub-workspace id, or an object' });

  let user: EmbedFields['user'] | null = null;
  if (!isObject(body.user)) issues.push({ path: 'user', message: 'is required: { id, name?, email? }' });
  else {
    const { id, name, email } = body.user;
    const before = issues.length;
    if (typeof id !== 'string' || id.length < 1 || id.length > MAX_USER_ID)
      issues.push({ path: 'user.id', message: `is required: 1 to ${MAX_USER_ID} characters` });
    if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > MAX_USER_NAME))
      issues.push({ path: 'user.name', message: `must be up to ${MAX_USER_NAME} characters` });
    if (email !== undefined && email !== null && (typeof email !== 'string' || email.length > MAX_USER_EMAIL || !/^[^\s@]+@[^\s@]+$/.test(email))) {
      issues.push({ path: 'user.email', message: 'must be an e-mail address' });
    }
    if (issues.length === before) user = { id: id as string, name: (name as string | undefined) ?? null, email: (email as string | undefined) ?? null };
  }

  let permissions: EmbedPermission[] = [...EMBED_PERMISSIONS];
  if (body.permissions !== undefined) {
    if (!Array.isArray(body.permissions)) issues.push({ path: 'permissions', message: `must be a list of ${EMBED_PERMISSIONS.join(', ')}` });
    else {
      const before = issues.length;
      body.permissions.forEach((permission, index) => {
        if (!EMBED_PERMISSIONS.includes(permission as EmbedPermission))
          issues.push({ path: `permissions.${index}`, message: `must be one of ${EMBED_PERMISSIONS.join(', ')}` });
      });
      if (issues.length === before) permissions = EMBED_PERMISSIONS.filter((permission) => (body.permissions as unknown[]).includes(permission));
    }
  }

  let startPath = DEFAULT_START_PATH;
  if (body.start_path !== undefined) {
    if (!isValidStartPath(body.start_path)) {
      issues.push({
        path: 'start_path',
        message: 'must be /decisions, /decisions/new, or /decisions/{id} optionally followed by /editor, /builder, /playground, /deploy or /executions',
      });
    } else startPath = body.start_path;
  }

  let origins: string[] | null = null;
  if (body.origins !== undefined) {
    if (!Array.isArray(body.origins) || body.origins.length === 0 || body.origins.length > MAX_ALLOWED_ORIGINS) {
      issues.push({ path: 'origins', message: `must be a list of 1 to ${MAX_ALLOWED_ORIGINS} origins` });
    } else {
      const list: string[] = [];
      body.origins.forEach((value, index) => {
        const origin = normalizeOrigin(value);
        if (origin === null) issues.push({ path: `origins.${index}`, message: 'must be an origin (scheme, host and optional port)' });
        else if (!list.includes(origin)) list.push(origin);
      });
      origins = list;
    }
  }

  if (body.locale !== undefined && !(EMBED_LOCALES as readonly unknown[]).includes(body.locale))
    issues.push({ path: 'locale', message: `must be one of ${EMBED_LOCALES.join(', ')}` });
  if (body.theme !== undefined && !(EMBED_THEMES as readonly unknown[]).includes(body.theme))
    issues.push({ path: 'theme', message: `must be one of ${EMBED_THEMES.join(', ')}` });

  let ttlSeconds = TTL_DEFAULT_SECONDS;
  if (body.ttl_seconds !== undefined) {
    if (!Number.isInteger(body.ttl_seconds) || (body.ttl_seconds as number) < TTL_MIN_SECONDS || (body.ttl_seconds as number) > TTL_MAX_SECONDS) {
      issues.push({ path: 'ttl_seconds', message: `must be an integer from ${TTL_MIN_SECONDS} to ${TTL_MAX_SECONDS}` });
    } else ttlSeconds = body.ttl_seconds as number;
  }

  if (issues.length > 0 || !workspace || !user) return { fields: null, issues };
  return {
    fields: {
      workspace,
      user,
      permissions,
      startPath,
      origins,
      locale: (body.locale as string | undefined) ?? null,
      theme: (body.theme as string | undefined) ?? null,
      ttlSeconds,
    },
    issues,
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
  const issues: ValidationIssue[] = [];
  const workspace = body.workspace;
  const userId = body.user_id;
  if (workspace !== undefined && workspace !== null && parseRef(workspace) === null)
    issues.push({ path: 'workspace', message: 'must be ext:<external_id> or a sub-workspace id' });
  if (userId !== undefined && userId !== null && (typeof userId !== 'string' || userId.length < 1 || userId.length > MAX_USER_ID)) {
    issues.push({ path: 'user_id', message: `must be 1 to ${MAX_USER_ID} characters` });
  }
  if ((workspace === undefined || workspace === null) && (userId === undefined || userId === null))
    issues.push({ path: 'workspace', message: 'name a workspace, a user_id, or both' });
  return { workspace: (workspace as string | undefined) ?? null, userId: (userId as string | undefined) ?? null, issues };
}
