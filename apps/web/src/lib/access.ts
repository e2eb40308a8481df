/**
 * What the signed-in person may do in the current workspace. A member's role decides in the standalone
 * application; an embed session carries a list of permissions instead (set by the partner), and no role.
 * The API checks both the same way (`WorkspaceRole(role, permission)`); the UI only hides what would be refused.
 */
export const EMBED_PERMISSIONS = ['decisions:read', 'decisions:write', 'decisions:deploy', 'decisions:delete', 'executions:read', 'agent'] as const;
export type EmbedPermission = (typeof EMBED_PERMISSIONS)[number];
/** `reviewer` stands outside the others' order: it reaches the review inbox and nothing else, as the API rules. */
export type Role = 'owner' | 'admin' | 'member' | 'viewer' | 'reviewer';

export interface Access {
  role: Role;
  /** Set only for an embed session: then these decide and the role is ignored. */
  permissions?: readonly EmbedPermission[];
}

const RANK: Record<Role, number> = { reviewer: -1, viewer: 0, member: 1, admin: 2, owner: 3 };

/** The role a member needs for what each permission allows, as the API's route declarations pair them. */
const ROLE_FOR: Record<EmbedPermission, Role> = {
  'decisions:read': 'viewer',
  'decisions:write': 'member',
  'decisions:deploy': 'admin',
  'decisions:delete': 'admin',
  'executions:read': 'viewer',
  agent: 'member',
};

export function isEmbedPermission(value: unknown): value is EmbedPermission {
  return (EMBED_PERMISSIONS as readonly unknown[]).includes(value);
}

/** Whether a member's role reaches `minimum`. An embed session has no role: it reaches none (keys, members, billing, settings). */
export function reachesRole(access: Access | null, minimum: Role): boolean {
  if (access === null || access.permissions !== undefined) return false;
  // The reviews ask for a reviewer, whom Members and up stand in for; a reviewer reaches no other role's screens.
  if (minimum === 'reviewer') return access.role === 'reviewer' || RANK[access.role] >= RANK.member;
  return RANK[access.role] >= RANK[minimum];
}

/** Where a member lands: a reviewer's one screen is the inbox. */
export function homePath(access: Access | null): string {
  return access !== null && access.permissions === undefined && access.role === 'reviewer' ? '/reviews' : '/decisions';
}

/** Whether `permission`'s actions are allowed: the embed session's list, or the member's role. */
export function permits(access: Access | null, permission: EmbedPermission): boolean {
  if (access === null) return false;
  if (access.permissions !== undefined) return access.permissions.includes(permission);
  return RANK[access.role] >= RANK[ROLE_FOR[permission]];
}

export const DECISION_VIEWS = ['overview', 'quality', 'editor', 'playground', 'deploy', 'history', 'replay', 'executions', 'deliveries', 'secret-url'] as const;
export type DecisionView = (typeof DECISION_VIEWS)[number];

/**
 * What each view of a decision needs in an embed session (the playground runs the draft: a write, as the API
 * declares it); null: never offered in an embed (deliveries and the secret URL are the workspace's own affairs).
 */
const VIEW_PERMISSION: Record<DecisionView, EmbedPermission | null> = {
  overview: 'executions:read',
  quality: 'decisions:read',
  editor: 'decisions:read',
  playground: 'decisions:write',
  deploy: 'decisions:deploy',
  history: 'decisions:deploy',
  replay: 'decisions:deploy',
  executions: 'executions:read',
  deliveries: null,
  'secret-url': null,
};

/**
 * The role each view needs in the standalone application: deploying, the version history and replays are
 * answered to Admins only, so the views that read nothing else are not offered below that.
 */
const VIEW_ROLE: Record<DecisionView, Role> = {
  overview: 'viewer',
  quality: 'viewer',
  editor: 'viewer',
  playground: 'viewer',
  deploy: 'admin',
  history: 'admin',
  replay: 'admin',
  executions: 'viewer',
  deliveries: 'viewer',
  'secret-url': 'viewer',
};

/**
 * Whether a decision's view is offered: to a member, by role (a Viewer's editor is read-only, as before); to an
 * embed session, those its permissions cover.
 */
export function offersView(access: Access | null, view: DecisionView): boolean {
  if (access === null) return false;
  if (access.permissions === undefined) return RANK[access.role] >= RANK[VIEW_ROLE[view]];
  const needed = VIEW_PERMISSION[view];
  return needed !== null && access.permissions.includes(needed);
}

/** The embed's start paths name the editor's form view `builder`. */
export function decisionView(view: string): DecisionView | null {
  const name = view === 'builder' ? 'editor' : view;
  return (DECISION_VIEWS as readonly string[]).includes(name) ? (name as DecisionView) : null;
}

export type Screen =
  | { name: 'decisions' }
  | { name: 'new-decision' }
  | { name: 'decision'; id: string; view: string }
  | { name: 'executions' }
  | { name: 'execution'; id: string }
  | { name: 'keys' | 'members' | 'billing' | 'settings' | 'workspaces' }
  | { name: 'not-found' };

function segments(path: string): string[] {
  return path.split('/').filter(Boolean);
}

/** The screen a signed-in path draws (`/sign-in`, `/sign-up` and `/` are handled before). */
export function screenOf(path: string): Screen {
  const parts = segments(path);
  const decode = (value: string) => {
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  };
  if (parts[0] === 'decisions') {
    if (parts.length === 1) return { name: 'decisions' };
    if (parts.length === 2 && parts[1] === 'new') return { name: 'new-decision' };
    if (parts.length === 2) return { name: 'decision', id: decode(parts[1]!), view: 'editor' };
    if (parts.length === 3) return { name: 'decision', id: decode(parts[1]!), view: parts[2]! };
  }
  if (parts[0] === 'executions') {
    if (parts.length === 1) return { name: 'executions' };
    if (parts.length === 2) return { name: 'execution', id: decode(parts[1]!) };
  }
  if (parts.length === 1 && ['keys', 'members', 'billing', 'settings', 'workspaces'].includes(parts[0]!)) return { name: parts[0] as 'keys' };
  return { name: 'not-found' };
}

/** Whether a screen is open to an embed session with these permissions; the account's own screens never are. */
export function embedAllows(screen: Screen, permissions: readonly EmbedPermission[]): boolean {
  switch (screen.name) {
    case 'decisions':
      return permissions.includes('decisions:read');
    case 'new-decision':
      return permissions.includes('decisions:write');
    case 'decision': {
      // Every view loads the decision first, which is a read.
      const view = decisionView(screen.view);
      return permissions.includes('decisions:read') && (view === null || offersView({ role: 'viewer', permissions }, view));
    }
    case 'executions':
    case 'execution':
      return permissions.includes('executions:read');
    case 'not-found':
      return true;
    default:
      return false;
  }
}

/** The workspace's own screens, in the navigation's order, with the role whose API answers them. */
export const WORKSPACE_SCREENS = [
  ['/decisions', 'viewer'],
  ['/executions', 'viewer'],
  ['/reviews', 'reviewer'],
  ['/deliveries', 'viewer'],
  ['/keys', 'admin'],
  ['/signing-secret', 'admin'],
  ['/secrets', 'admin'],
  ['/members', 'viewer'],
  ['/billing', 'viewer'],
  ['/settings', 'admin'],
] as const;

export type WorkspaceScreen = (typeof WORKSPACE_SCREENS)[number][0];

/** Whether a member's role opens one of the workspace's screens; an embed session opens none of these by this rule. */
export function offersScreen(access: Access | null, screen: WorkspaceScreen): boolean {
  const needed = WORKSPACE_SCREENS.find(([path]) => path === screen)?.[1] ?? 'owner';
  return reachesRole(access, needed);
}

/**
 * Whether to ask the API for an embed session at start (only without a token of its own): when the launch's
 * readable hint cookie is there, or when the page is framed (a session launched before the hint existed). A
 * standalone signed-out page then asks nothing and logs no 401.
 */
export function mayBeEmbedded(cookies: string, framed: boolean): boolean {
  return framed || cookies.split(';').some((part) => part.trim().startsWith('ds_embed_hint=1'));
}
