/**
 * The partner service's subjects and their payloads, and the workspace events it alone publishes to the
 * JetStream WORKSPACE_EVENTS stream.
 */
import type { WorkspaceScoped } from './common';
import type { CopyDecisionsReply } from './decision-runner';
import { rpcSubject } from './typed-subjects';

/** A workspace was deleted: the payload of a WORKSPACE_EVENTS message. */
export interface WorkspaceDeletedEvent {
  workspaceId: string;
  /** The partner workspace a deleted sub-workspace belonged to; null for a workspace its Owner deleted. */
  partnerWorkspaceId: string | null;
  deletedAt: string;
}

export type EmbedPermission = 'decisions:read' | 'decisions:write' | 'decisions:deploy' | 'decisions:delete' | 'executions:read' | 'agent';

/** The caller of a partner endpoint: the API key's workspace and the user who created the key (null for none). */
export interface PartnerCaller {
  partnerWorkspaceId: string;
  authorId: string | null;
  livemode: boolean;
}

export interface SetPartnerSettingsRequest extends WorkspaceScoped {
  enabled: unknown;
  allowed_origins: unknown;
}

export interface PartnerSettingsReply {
  enabled: boolean;
  allowed_origins: string[];
}

export interface SubWorkspaceView {
  id: string;
  external_id: string;
  name: string;
  metadata: Record<string, string>;
  limits: { max_decisions: number | null; monthly_decisions: number | null };
  usage: { decisions: number; period_used: number; period_start: string; period_end: string };
  created_at: string;
  seed?: CopyDecisionsReply;
}

export interface UpsertSubWorkspaceRequest {
  caller: PartnerCaller;
  body: Record<string, unknown>;
}

/** `created` decides 201 or 200; the gateway writes the workspace row (its own table) for `workspace.id`. */
export interface UpsertSubWorkspaceReply {
  created: boolean;
  workspace: SubWorkspaceView;
}

export interface ListSubWorkspacesRequest {
  caller: PartnerCaller;
  query: Record<string, unknown>;
}

export interface ListSubWorkspacesReply {
  data: SubWorkspaceView[];
  next_cursor: string | null;
}

export interface SubWorkspaceRefRequest {
  caller: PartnerCaller;
  /** The sub-workspace's id or `ext:<external_id>`. */
  ref: string;
}

export interface UpdateSubWorkspaceRequest extends SubWorkspaceRefRequest {
  body: Record<string, unknown>;
}

export interface DeleteSubWorkspaceReply {
  id: string;
}

/** The Owner deletes a workspace of their own (the gateway has checked the role and the plan). */
export interface DeleteOwnWorkspaceRequest {
  workspaceId: string;
}

export interface CreateEmbedSessionRequest {
  caller: PartnerCaller;
  body: Record<string, unknown>;
}

/** `workspaceCreated`: the gateway writes the workspace row; `workspace.created` says the same to the caller. */
export interface EmbedSessionReply {
  id: string;
  url: string;
  launch_expires_at: string;
  expires_at: string;
  permissions: EmbedPermission[];
  origins: string[];
  workspace: SubWorkspaceView & { created: boolean };
}

export interface CloseEmbedSessionRequest {
  caller: PartnerCaller;
  id: string;
}

export interface RevokeEmbedSessionsRequest {
  caller: PartnerCaller;
  body: Record<string, unknown>;
}

export interface RedeemTicketRequest {
  ticket: string;
}

/** An embed session as the gateway enforces it. */
export interface EmbedSessionView {
  id: string;
  workspaceId: string;
  user: { id: string; name: string | null; email: string | null };
  permissions: EmbedPermission[];
  origins: string[];
  startPath: string;
  locale: string | null;
  theme: string | null;
  expiresAt: string;
}

/**
 * A redeemed ticket: the cookie token (shown this once) and the session. A ticket that is used, past its
 * 60 seconds, or whose session was closed, revoked or expired answers `token: null` with the session's origins
 * (the "reopen" page may be framed by them); an unknown ticket answers null.
 */
export type RedeemTicketReply = { token: string; session: EmbedSessionView } | { token: null; origins: string[] } | null;

export interface EmbedSessionLookupRequest {
  token: string;
}

export type EmbedSessionLookupReply = EmbedSessionView | null;

export interface EmbedSessionClosedReply {
  closed: true;
}

export interface EmbedSessionsRevokedReply {
  revoked: number;
}

export const PARTNER_SUBJECTS = {
  /** The operator's partner-mode switch of a workspace (`enabled`, `allowed_origins`). */
  setSettings: rpcSubject<SetPartnerSettingsRequest, PartnerSettingsReply>('v1.partner.settings.set'),
  upsertWorkspace: rpcSubject<UpsertSubWorkspaceRequest, UpsertSubWorkspaceReply>('v1.partner.workspaces.upsert'),
  listWorkspaces: rpcSubject<ListSubWorkspacesRequest, ListSubWorkspacesReply>('v1.partner.workspaces.list'),
  getWorkspace: rpcSubject<SubWorkspaceRefRequest, SubWorkspaceView>('v1.partner.workspaces.get'),
  updateWorkspace: rpcSubject<UpdateSubWorkspaceRequest, SubWorkspaceView>('v1.partner.workspaces.update'),
  deleteWorkspace: rpcSubject<SubWorkspaceRefRequest, DeleteSubWorkspaceReply>('v1.partner.workspaces.delete'),
  /**
   * Announces the deletion of a workspace by its Owner on WORKSPACE_EVENTS, as for a sub-workspace: the partner
   * service is the one publisher of those events. Refused (409) for a sub-workspace and for a partner with any.
   */
  deleteOwnWorkspace: rpcSubject<DeleteOwnWorkspaceRequest, DeleteSubWorkspaceReply>('v1.partner.workspaces.delete-own'),
  createEmbedSession: rpcSubject<CreateEmbedSessionRequest, EmbedSessionReply>('v1.partner.embed.create'),
  closeEmbedSession: rpcSubject<CloseEmbedSessionRequest, EmbedSessionClosedReply>('v1.partner.embed.close'),
  revokeEmbedSessions: rpcSubject<RevokeEmbedSessionsRequest, EmbedSessionsRevokedReply>('v1.partner.embed.revoke'),
  /** Exchanges a launch ticket (once, within its 60 seconds) for the embed session's cookie token. */
  redeemTicket: rpcSubject<RedeemTicketRequest, RedeemTicketReply>('v1.partner.embed.redeem'),
  /** The live embed session a cookie token names, or null. */
  embedSession: rpcSubject<EmbedSessionLookupRequest, EmbedSessionLookupReply>('v1.partner.embed.session'),
} as const;
