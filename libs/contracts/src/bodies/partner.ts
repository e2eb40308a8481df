import { z } from 'zod';
import { INT4_MAX } from '../column-ranges';
import { text, wholeNumber } from './parse-body';
import type { EmbedPermission } from '../partner';

// The bodies of the partner API (`/v1/workspaces`, `/v1/embed/sessions`). Their checks run in the partner service,
// after it has found partner mode on (403 comes before 400); the OpenAPI components are generated from them.
// Unknown fields are ignored, except inside `limits`.

export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const SLUG_MAX = 64;

export const MAX_METADATA_PAIRS = 20;
/** Stripe's metadata bounds, where the spec names only the count. */
export const MAX_METADATA_KEY = 40;
export const MAX_METADATA_VALUE = 500;
export const MAX_SEED_DECISIONS = 50;
export const MAX_ALLOWED_ORIGINS = 20;
export const MAX_USER_ID = 128;
export const MAX_USER_NAME = 80;
export const MAX_USER_EMAIL = 254;

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
export const DEFAULT_START_PATH = '/decisions';
const START_PATH_PATTERN = /^\/decisions(\/new|\/dec_[A-Za-z0-9]{20}(\/(editor|builder|playground|deploy|executions))?)?$/;

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

/** `/decisions`, `/decisions/new`, or `/decisions/{id}` optionally followed by one of the five views. */
export function isValidStartPath(value: unknown): value is string {
  return typeof value === 'string' && START_PATH_PATTERN.test(value);
}

/** Origins, each normalised, duplicates dropped; `message` for one that is not an origin. */
function originList(min: number, message: string, listMessage: string) {
  const origin = z.string({ error: message }).transform((value, ctx) => {
    const normalized = normalizeOrigin(value);
    if (normalized === null) ctx.addIssue({ code: 'custom', message, input: value });
    return normalized ?? '';
  });
  return z
    .array(origin, { error: listMessage })
    .min(min, { error: listMessage, abort: true })
    .max(MAX_ALLOWED_ORIGINS, { error: listMessage, abort: true })
    .transform((origins) => [...new Set(origins)]);
}

const NAME_MESSAGE = 'must be 1 to 80 characters';
/** 1 to 80 characters counted as code points (as JSON Schema's maxLength counts them), not only white space. */
const subWorkspaceName = z
  .string({ error: NAME_MESSAGE })
  .refine((name) => name.trim().length >= 1 && [...name].length <= 80, { error: NAME_MESSAGE })
  .meta({ minLength: 1, maxLength: 80 });

const METADATA_MESSAGE = `must be an object of up to ${MAX_METADATA_PAIRS} string pairs`;
/** Up to MAX_METADATA_PAIRS pairs; a key of the wrong length is named, else a value that is not a short string. */
export const METADATA = z
  .record(z.string(), z.unknown(), { error: METADATA_MESSAGE })
  .superRefine((metadata, ctx) => {
    const entries = Object.entries(metadata);
    if (entries.length > MAX_METADATA_PAIRS) ctx.addIssue({ code: 'custom', message: `holds at most ${MAX_METADATA_PAIRS} pairs`, input: metadata });
    for (const [key, value] of entries) {
      if (key.length < 1 || key.length > MAX_METADATA_KEY)
        ctx.addIssue({ code: 'custom', path: [key], message: `keys are 1 to ${MAX_METADATA_KEY} characters`, input: value });
      else if (typeof value !== 'string' || value.length > MAX_METADATA_VALUE)
        ctx.addIssue({ code: 'custom', path: [key], message: `must be a string of up to ${MAX_METADATA_VALUE} characters`, input: value });
    }
  })
  .transform((metadata) => metadata as Record<string, string>)
  .meta({
    description: `up to ${MAX_METADATA_PAIRS} string pairs`,
    maxProperties: MAX_METADATA_PAIRS,
    propertyNames: { minLength: 1, maxLength: MAX_METADATA_KEY },
    additionalProperties: { type: 'string', maxLength: MAX_METADATA_VALUE },
  });

const LIMIT_MESSAGE = `must be a whole number from 0 to ${INT4_MAX}, or null for the partner’s default`;
const limitValue = wholeNumber(0, INT4_MAX, LIMIT_MESSAGE)
  .nullable()
  .optional()
  .describe("at most what the partner's own plan allows (its max_decisions, its included_decisions); null means the partner's default");
/** Only the limits named; an absent one keeps its value on update. */
const limits = z.strictObject(
  { max_decisions: limitValue, monthly_decisions: limitValue },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown limit' : 'must be an object with max_decisions and monthly_decisions') },
);

const SLUG_MESSAGE = 'must be a decision slug';
const seed = z
  .object(
    {
      decisions: z
        .array(z.string({ error: SLUG_MESSAGE }).max(SLUG_MAX, { error: SLUG_MESSAGE }).regex(SLUG_PATTERN, { error: SLUG_MESSAGE }), {
          error: `must be a list of up to ${MAX_SEED_DECISIONS} slugs`,
        })
        .max(MAX_SEED_DECISIONS, { error: `must be a list of up to ${MAX_SEED_DECISIONS} slugs`, abort: true }),
      deploy: z.boolean({ error: 'must be a boolean' }).optional(),
    },
    { error: 'must be an object { decisions: [slug, …], deploy: boolean }' },
  )
  .transform((value) => ({ decisions: [...new Set(value.decisions)], deploy: value.deploy === true }))
  .describe("Creation only: copies the partner's deployed decisions named here.");

const EXTERNAL_ID_MESSAGE = 'is required: 1 to 128 characters from A-Za-z0-9._:-';

/** POST /v1/workspaces: create a sub-workspace, or update the one with this external id. */
export const SUB_WORKSPACE_CREATE_BODY = z.object({
  external_id: z.string({ error: EXTERNAL_ID_MESSAGE }).regex(EXTERNAL_ID_PATTERN, { error: EXTERNAL_ID_MESSAGE }),
  name: subWorkspaceName,
  metadata: METADATA.optional(),
  limits: limits.optional(),
  seed: seed.optional(),
});

/** PATCH /v1/workspaces/{ref}: only the fields named change. */
export const SUB_WORKSPACE_UPDATE_BODY = z.object({
  name: subWorkspaceName.optional(),
  metadata: METADATA.optional(),
  limits: limits.optional(),
  seed: z.never({ error: 'is accepted on creation only' }).optional().describe('Accepted on creation only.'),
});

const WORKSPACE_REQUIRED = 'is required: ext:<external_id>, a sub-workspace id, or an object';
/** A reference to an existing sub-workspace, or the fields of one to create on the fly (checked at `workspace.…`). */
const embedWorkspace = z
  .union([z.string(), z.record(z.string(), z.unknown())], { error: WORKSPACE_REQUIRED })
  .superRefine((workspace, ctx) => {
    if (typeof workspace === 'string') {
      if (parseRef(workspace) === null)
        ctx.addIssue({ code: 'custom', message: 'must be ext:<external_id>, a sub-workspace id, or an object that creates one', input: workspace });
      return;
    }
    const parsed = SUB_WORKSPACE_CREATE_BODY.safeParse(workspace);
    if (parsed.success) return;
    for (const issue of parsed.error.issues) {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [null];
      for (const key of keys)
        ctx.addIssue({ code: 'custom', path: key === null ? issue.path : [...issue.path, key], message: issue.message, input: workspace });
    }
  })
  .transform((workspace) => (typeof workspace === 'string' ? { ref: workspace } : { create: workspace }))
  .meta({
    description: '`ext:<external_id>` or the sub-workspace id, or an object that creates it on the fly',
    anyOf: [{ type: 'string' }, { $ref: '#/components/schemas/SubWorkspaceCreate' }],
  });

const PERMISSION_MESSAGE = `must be one of ${EMBED_PERMISSIONS.join(', ')}`;
const START_PATH_MESSAGE =
  'must be /decisions, /decisions/new, or /decisions/{id} optionally followed by /editor, /builder, /playground, /deploy or /executions';
const TTL_MESSAGE = `must be an integer from ${TTL_MIN_SECONDS} to ${TTL_MAX_SECONDS}`;

/** POST /v1/embed/sessions. The requested origins are checked against the partner's own list afterwards. */
export const EMBED_SESSION_BODY = z.object({
  workspace: embedWorkspace,
  user: z.object(
    {
      id: text(1, MAX_USER_ID, `is required: 1 to ${MAX_USER_ID} characters`),
      name: text(0, MAX_USER_NAME, `must be up to ${MAX_USER_NAME} characters`).nullish(),
      email: text(0, MAX_USER_EMAIL, 'must be an e-mail address')
        .regex(/^[^\s@]+@[^\s@]+$/, { error: 'must be an e-mail address' })
        .nullish(),
    },
    { error: 'is required: { id, name?, email? }' },
  ),
  permissions: z
    .array(z.enum(EMBED_PERMISSIONS as [EmbedPermission, ...EmbedPermission[]], { error: PERMISSION_MESSAGE }), {
      error: `must be a list of ${EMBED_PERMISSIONS.join(', ')}`,
    })
    .optional()
    .transform((named) => (named === undefined ? [...EMBED_PERMISSIONS] : EMBED_PERMISSIONS.filter((permission) => named.includes(permission))))
    .describe('default all'),
  start_path: z.string({ error: START_PATH_MESSAGE }).regex(START_PATH_PATTERN, { error: START_PATH_MESSAGE }).default(DEFAULT_START_PATH),
  origins: originList(1, 'must be an origin (scheme, host and optional port)', `must be a list of 1 to ${MAX_ALLOWED_ORIGINS} origins`)
    .optional()
    .describe('a subset of the allowed origins (default all)'),
  locale: z.enum(EMBED_LOCALES, { error: `must be one of ${EMBED_LOCALES.join(', ')}` }).optional(),
  theme: z.enum(EMBED_THEMES, { error: `must be one of ${EMBED_THEMES.join(', ')}` }).optional(),
  ttl_seconds: wholeNumber(TTL_MIN_SECONDS, TTL_MAX_SECONDS, TTL_MESSAGE).default(TTL_DEFAULT_SECONDS),
});

const USER_ID_MESSAGE = `must be 1 to ${MAX_USER_ID} characters`;
/** POST /v1/embed/sessions/revoke: a sub-workspace, one of the partner's user ids, or both. */
export const EMBED_REVOKE_BODY = z
  .object({
    workspace: z
      .string({ error: 'must be ext:<external_id> or a sub-workspace id' })
      .refine((ref) => parseRef(ref) !== null, { error: 'must be ext:<external_id> or a sub-workspace id' })
      .nullish(),
    user_id: text(1, MAX_USER_ID, USER_ID_MESSAGE).nullish(),
  })
  .superRefine((body, ctx) => {
    if ((body.workspace ?? null) === null && (body.user_id ?? null) === null)
      ctx.addIssue({ code: 'custom', path: ['workspace'], message: 'name a workspace, a user_id, or both', input: body });
  })
  .transform((body) => ({ workspace: body.workspace ?? null, userId: body.user_id ?? null }))
  .describe('A sub-workspace, a user_id, or both.');

/** PUT /admin/v1/workspaces/{ws}/partner: the operator's switch. */
export const PARTNER_SETTINGS_BODY = z
  .object({
    enabled: z.boolean({ error: 'must be a boolean' }),
    allowed_origins: originList(
      0,
      'must be an https origin (scheme, host and optional port, no path)',
      `must be a list of up to ${MAX_ALLOWED_ORIGINS} origins`,
    )
      .nullish()
      .transform((origins) => origins ?? []),
  })
  .transform((body) => ({ enabled: body.enabled, allowedOrigins: body.allowed_origins }));
