import { applyDecorators, createParamDecorator, ExecutionContext } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { FastifyRequest } from 'fastify';
import { EmbedPermission, EmbedSessionView, ResolvedHook } from '@ds/contracts';
import { AuthenticatedKey } from '../auth/api-keys.service';
import { Role } from '../entities';
import { WindowName } from '../limits/windows';

/**
 * What a route needs before anything else of the request is looked at. Every route declares exactly one;
 * the edge reads it from the route the router matched (`request.routeOptions.config.access`), never from
 * the text of the URL, so an encoded or oddly spelled path can only reach a route together with its check.
 */
export type Access =
  /** Anyone: the health check, public documents. */
  | { kind: 'public' }
  /** The application's doors that need no session yet (sign-up, sign-in, sign-out); API keys are refused. */
  | { kind: 'application-entry' }
  /**
   * A signed-in user; with `role`, a member of the route's `:ws` workspace holding at least that role. With
   * `embed`, an embed session (partner mode) is accepted too when it holds that permission and, on a
   * workspace route, `:ws` is its sub-workspace; `'session'` needs no permission beyond a live session.
   * Without `embed`, embed sessions are refused.
   */
  | { kind: 'session'; role?: Role; embed?: EmbedPermission | 'session' }
  /** An embed session only (the embedded editor's own calls). */
  | { kind: 'embed' }
  /** An API key of the workspace; the request counts in `window`. `slugParam` is checked before the body is read. */
  | { kind: 'api-key'; window: Exclude<WindowName, 'webhooks'>; slugParam?: string }
  /** The operator token (`ADMIN_TOKEN`). */
  | { kind: 'operator' }
  /**
   * A secret URL: the `whk_` token in `tokenParam` is the credential (unknown, rotated or off: 404). The
   * proof of its secret and its window need the body, so the handler checks them.
   */
  | { kind: 'hook'; tokenParam: string };

export type AccessKind = Access['kind'];

/** The route's config as the edge sees it; `access` is absent only on the router's not-found route. */
export interface RouteAccessConfig {
  access?: Access;
}

function declare(access: Access): MethodDecorator {
  return applyDecorators(RouteConfig({ access } satisfies RouteAccessConfig));
}

export const PublicRoute = () => declare({ kind: 'public' });
export const ApplicationEntry = () => declare({ kind: 'application-entry' });
/** Any signed-in user, for routes that are not about one workspace; `embed` also admits embed sessions. */
export const SignedIn = (embed?: EmbedPermission | 'session') => declare(embed === undefined ? { kind: 'session' } : { kind: 'session', embed });
/**
 * A member of the route's `:ws` workspace with at least `role`; with `embed`, also an embed session of that
 * sub-workspace holding that permission (the embedded editor calls the application's own endpoints).
 */
export const WorkspaceRole = (role: Role, embed?: EmbedPermission) =>
  declare(embed === undefined ? { kind: 'session', role } : { kind: 'session', role, embed });
export const EmbedSessionRoute = () => declare({ kind: 'embed' });
export const ApiKeyRoute = (window: 'reads') => declare({ kind: 'api-key', window });
/** The run endpoint: the decisions window, and the slug format checked in the order of checks. */
export const RunRoute = (slugParam: string) => declare({ kind: 'api-key', window: 'decisions', slugParam });
export const OperatorRoute = () => declare({ kind: 'operator' });
export const HookRoute = (tokenParam: string) => declare({ kind: 'hook', tokenParam });

/** The workspace route parameter that a role check reads. */
export const WORKSPACE_PARAM = 'ws';

/** Who the edge found the caller to be, set by the access check of the matched route. */
export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'api-key'; key: AuthenticatedKey }
  | { kind: 'user'; userId: string; membership: { workspaceId: string; role: Role } | null }
  | { kind: 'embed'; session: EmbedSessionView }
  | { kind: 'operator' }
  | { kind: 'hook'; hook: ResolvedHook };

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}

function callerOf(context: ExecutionContext): Caller {
  return context.switchToHttp().getRequest<FastifyRequest>().caller;
}

/**
 * Identity readers for handlers. Each throws when the route's declared access did not establish that
 * identity: a handler can never run with an undefined owner and so never builds a query without one.
 */
export const ApiKey = createParamDecorator((_data: unknown, context: ExecutionContext): AuthenticatedKey => {
  const caller = callerOf(context);
  if (caller.kind !== 'api-key') throw identityMissing('API key');
  return caller.key;
});

/** The secret URL the path's token resolved to. */
export const SecretUrl = createParamDecorator((_data: unknown, context: ExecutionContext): ResolvedHook => {
  const caller = callerOf(context);
  if (caller.kind !== 'hook') throw identityMissing('secret URL');
  return caller.hook;
});

export const UserId = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const caller = callerOf(context);
  if (caller.kind !== 'user') throw identityMissing('user');
  return caller.userId;
});

/** The `:ws` workspace, as verified by the route's role check or embed session (never the raw parameter). */
export const MemberWorkspace = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const caller = callerOf(context);
  if (caller.kind === 'embed') return caller.session.workspaceId;
  if (caller.kind !== 'user' || !caller.membership) throw identityMissing('workspace membership');
  return caller.membership.workspaceId;
});

/** The caller's role in the `:ws` workspace, as the route's role check found it. */
export const MemberRole = createParamDecorator((_data: unknown, context: ExecutionContext): Role => {
  const caller = callerOf(context);
  if (caller.kind !== 'user' || !caller.membership) throw identityMissing('workspace membership');
  return caller.membership.role;
});

export const EmbedSession = createParamDecorator((_data: unknown, context: ExecutionContext): EmbedSessionView => {
  const caller = callerOf(context);
  if (caller.kind !== 'embed') throw identityMissing('embed session');
  return caller.session;
});

function identityMissing(what: string): Error {
  // A route that reads an identity its access declaration does not establish is a programming error.
  return new Error(`the route reads the caller's ${what}, which its access declaration does not establish`);
}
