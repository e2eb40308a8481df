import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EmbedPermission, EmbedSessionReply, EmbedSessionView, PartnerCaller, RedeemTicketReply, ServiceError, SubWorkspaceView } from '@ds/contracts';
import { newId } from '@ds/ids';
import { checkEmbedSession, checkRevoke, LAUNCH_TTL_SECONDS, resolveOrigins } from '@ds/partner';
import { PLATFORM, rowsAffected, rowsReturned } from '@ds/platform';
import { PartnerConfig } from './config';
import { invalid, SubWorkspacesService } from './sub-workspaces.service';

interface SessionRow {
  id: string;
  workspace_id: string;
  user_id: string;
  user_name: string | null;
  user_email: string | null;
  permissions: EmbedPermission[];
  origins: string[];
  start_path: string;
  locale: string | null;
  theme: string | null;
  expires_at: Date;
}

const SESSION_COLUMNS = 'id, workspace_id, user_id, user_name, user_email, permissions, origins, start_path, locale, theme, expires_at';
const EMB_PATTERN = /^emb_[A-Za-z0-9]{20}$/;
/** Tickets and cookie tokens: 256 random bits each. */
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function secret(): string {
  return randomBytes(32).toString('base64url');
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

function sessionView(row: SessionRow): EmbedSessionView {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    user: { id: row.user_id, name: row.user_name, email: row.user_email },
    permissions: row.permissions,
    origins: row.origins,
    startPath: row.start_path,
    locale: row.locale,
    theme: row.theme,
    expiresAt: row.expires_at.toISOString(),
  };
}

/**
 * Embed sessions: a one-time launch ticket (60 seconds) is exchanged once for the session's cookie token. Both
 * are kept only as hashes. A session ends at `expires_at`, when closed, or when revoked (both set `closed_at`).
 */
@Injectable()
export class EmbedSessionsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly workspaces: SubWorkspacesService,
    @Inject(PLATFORM.config) private readonly config: PartnerConfig,
  ) {}

  async create(caller: PartnerCaller, body: Record<string, unknown>): Promise<EmbedSessionReply> {
    const settings = await this.workspaces.authorize(caller);
    const { fields, issues } = checkEmbedSession(body);
    if (!fields) throw invalid(issues, 'The embed session is not valid.');
    const origins = resolveOrigins(fields.origins, settings.allowedOrigins, caller.livemode);
    if (origins.issues.length > 0) throw invalid(origins.issues, 'The embed session is not valid.');

    let workspace: SubWorkspaceView;
    let created = false;
    if ('ref' in fields.workspace) {
      workspace = await this.workspaces.view(await this.workspaces.resolve(this.db.manager, caller.partnerWorkspaceId, fields.workspace.ref));
    } else {
      const upserted = await this.workspaces.upsert(caller, fields.workspace.create, 'workspace.');
      workspace = upserted.workspace;
      created = upserted.created;
    }

    const id = newId('emb');
    const ticket = secret();
    const now = Date.now();
    const launchExpiresAt = new Date(now + LAUNCH_TTL_SECONDS * 1000);
    const expiresAt = new Date(now + fields.ttlSeconds * 1000);
    await this.db.query(
      `INSERT INTO embed_sessions (id, partner_workspace_id, workspace_id, user_id, user_name, user_email, permissions, origins, start_path, locale, theme,
         ticket_hash, launch_expires_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        id,
        caller.partnerWorkspaceId,
        workspace.id,
        fields.user.id,
        fields.user.name,
        fields.user.email,
        JSON.stringify(fields.permissions),
        JSON.stringify(origins.origins),
        fields.startPath,
        fields.locale,
        fields.theme,
        sha256(ticket),
        launchExpiresAt,
        expiresAt,
      ],
    );
    return {
      id,
      url: `${this.config.appUrl}/embed/launch?ticket=${ticket}`,
      launch_expires_at: launchExpiresAt.toISOString(),
      expires_at: expiresAt.toISOString(),
      permissions: fields.permissions,
      origins: origins.origins,
      workspace: { ...workspace, created },
    };
  }

  /** Closes one of the partner's sessions; closing a closed one changes nothing. */
  async close(caller: PartnerCaller, id: string): Promise<void> {
    await this.workspaces.authorize(caller);
    if (typeof id !== 'string' || !EMB_PATTERN.test(id)) throw new ServiceError('NOT_FOUND', 'No such embed session.');
    const closed = rowsReturned(
      await this.db.query(`UPDATE embed_sessions SET closed_at = COALESCE(closed_at, now()) WHERE id = $1 AND partner_workspace_id = $2 RETURNING id`, [
        id,
        caller.partnerWorkspaceId,
      ]),
    );
    if (closed.length === 0) throw new ServiceError('NOT_FOUND', 'No such embed session.');
  }

  /** Closes the live sessions of one sub-workspace, of one of the partner's users, or of that user in that sub-workspace. */
  async revoke(caller: PartnerCaller, body: Record<string, unknown>): Promise<{ revoked: number }> {
    await this.workspaces.authorize(caller);
    const request = checkRevoke(body);
    if (request.issues.length > 0) throw invalid(request.issues);
    const conditions = ['partner_workspace_id = $1', 'closed_at IS NULL', 'expires_at > now()'];
    const parameters: unknown[] = [caller.partnerWorkspaceId];
    if (request.workspace !== null) {
      const workspace = await this.workspaces.resolve(this.db.manager, caller.partnerWorkspaceId, request.workspace);
      parameters.push(workspace.id);
      conditions.push(`workspace_id = $${parameters.length}`);
    }
    if (request.userId !== null) {
      parameters.push(request.userId);
      conditions.push(`user_id = $${parameters.length}`);
    }
    const revoked = rowsAffected(await this.db.query(`UPDATE embed_sessions SET closed_at = now() WHERE ${conditions.join(' AND ')} RETURNING id`, parameters));
    return { revoked };
  }

  /**
   * Redeems a ticket in one statement, so that two loads of one launch URL cannot both win: null when the
   * ticket is unknown, used, past its 60 seconds, or its session closed or expired.
   */
  async redeem(ticket: unknown): Promise<RedeemTicketReply> {
    if (typeof ticket !== 'string' || !SECRET_PATTERN.test(ticket)) return null;
    const token = secret();
    const [row] = rowsReturned<SessionRow>(
      await this.db.query(
        `UPDATE embed_sessions SET redeemed_at = now(), token_hash = $2
          WHERE ticket_hash = $1 AND redeemed_at IS NULL AND closed_at IS NULL AND launch_expires_at > now() AND expires_at > now()
            AND EXISTS (SELECT 1 FROM partner_settings p WHERE p.workspace_id = embed_sessions.partner_workspace_id AND p.enabled)
          RETURNING ${SESSION_COLUMNS}`,
        [sha256(ticket), sha256(token)],
      ),
    );
    if (row) return { token, session: sessionView(row) };
    const [spent] = (await this.db.query('SELECT origins FROM embed_sessions WHERE ticket_hash = $1', [sha256(ticket)])) as Array<{ origins: string[] }>;
    return spent ? { token: null, origins: spent.origins } : null;
  }

  /** The live session a cookie token names, or null. */
  async session(token: unknown): Promise<EmbedSessionView | null> {
    if (typeof token !== 'string' || !SECRET_PATTERN.test(token)) return null;
    // Partner mode is read with the session: one opened while the operator was turning it off never outlives it.
    const [row] = (await this.db.query(
      `SELECT ${SESSION_COLUMNS} FROM embed_sessions
        WHERE token_hash = $1 AND closed_at IS NULL AND expires_at > now()
          AND EXISTS (SELECT 1 FROM partner_settings p WHERE p.workspace_id = embed_sessions.partner_workspace_id AND p.enabled)`,
      [sha256(token)],
    )) as SessionRow[];
    return row ? sessionView(row) : null;
  }
}
