import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { looksLikeId, newId } from '@ds/ids';
import { Logger, PLATFORM, rowsReturned } from '@ds/platform';
import { canonicalEmail } from '../auth/email-address';
import { sha256 } from '../auth/tokens';
import { forbidden, requireVerifiedAddress } from '../auth/verified-address';
import { GatewayConfig } from '../config';
import { Mailer, MAILER } from '../mail/mailer';
import {
  InvitedRole,
  invitationExpiry,
  invitationMail,
  invitationState,
  PENDING_INVITATIONS_MAX,
  secondsUntilInvitationFits,
  unusableInvitation,
} from './invitation-rules';

export interface PendingInvitation {
  id: string;
  email: string;
  role: InvitedRole;
  invited_by: { user_id: string; email: string | null };
  created_at: string;
  expires_at: string;
}

export interface SentInvitation extends Omit<PendingInvitation, 'invited_by'> {
  /** Shown this once: whoever holds it and signs in with the invited e-mail joins. */
  token: string;
  url: string;
  /** Whether the link was also sent to the invited e-mail (only where SMTP_URL is set). */
  emailed: boolean;
}

/** What the invitation page shows before anyone signs in: who asks whom to join what, and as what. */
export interface InvitationPreview {
  email: string;
  role: InvitedRole;
  workspace: { name: string };
  invited_by: { name: string | null; email: string | null };
  expires_at: string;
}

interface InvitationRow {
  id: string;
  workspace_id: string;
  email: string;
  role: InvitedRole;
  accepted_at: Date | null;
  revoked_at: Date | null;
  expires_at: Date;
}

/**
 * Invitations to a workspace. The service sends no e-mail: the inviter passes the link on, and the person joins
 * by opening it signed in with the invited e-mail. Both are needed, so neither a forwarded link nor an account
 * made under someone else's address is enough alone.
 */
@Injectable()
export class InvitationsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: GatewayConfig,
    @Inject(MAILER) private readonly mailer: Mailer,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  /** `input` as INVITATION_BODY parses it; the e-mail is kept in its canonical spelling, as accounts' are. */
  async invite(workspaceId: string, inviterId: string, input: { email: string; role: InvitedRole }, now = new Date()): Promise<SentInvitation> {
    const { role } = input;
    const email = canonicalEmail(input.email);
    const token = `inv_tok_${randomBytes(32).toString('base64url')}`;
    const id = newId('inv');
    const expiresAt = invitationExpiry(now);
    await this.db.transaction(async (tx) => {
      // One workspace's and one sender's invitations are counted and written one at a time, in this order.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`invitations:workspace:${workspaceId}`]);
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`invitations:sender:${inviterId}`]);
      const member = (await tx.query('SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND u.email = $2', [
        workspaceId,
        email,
      ])) as unknown[];
      if (member.length > 0) throw new ServiceError('CONFLICT', 'This person is already a member of the workspace.');
      await this.refuseOverHourlyCeiling(tx, 'workspace_id', workspaceId, now, 'this workspace');
      await this.refuseOverHourlyCeiling(tx, 'invited_by', inviterId, now, 'you');
      // Inviting the same e-mail again replaces the pending invitation: its link stops working.
      await tx.query(`UPDATE invitations SET revoked_at = $3 WHERE workspace_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL`, [
        workspaceId,
        email,
        now,
      ]);
      const [pending] = (await tx.query(
        `SELECT count(*)::int AS n FROM invitations WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2`,
        [workspaceId, now],
      )) as Array<{ n: number }>;
      if (pending!.n >= PENDING_INVITATIONS_MAX) {
        throw new ServiceError('CONFLICT', `A workspace can have ${PENDING_INVITATIONS_MAX} pending invitations; revoke one first.`, {
          limit: PENDING_INVITATIONS_MAX,
        });
      }
      await tx.query(
        `INSERT INTO invitations (id, workspace_id, email, role, invited_by, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [id, workspaceId, email, role, inviterId, sha256(token), now, expiresAt],
      );
    });
    const url = `${this.config.appUrl}/invitations/accept?token=${token}`;
    const emailed = await this.mailInvitation(workspaceId, inviterId, { email, role, url, expiresAt });
    return { id, email, role, created_at: now.toISOString(), expires_at: expiresAt.toISOString(), token, url, emailed };
  }

  /**
   * Sends the link to the invited e-mail when this installation sends e-mail; answers whether it went out. A failure
   * leaves the invitation as it is: the link in the answer still works, and whoever invited can pass it on.
   */
  private async mailInvitation(
    workspaceId: string,
    inviterId: string,
    invitation: { email: string; role: InvitedRole; url: string; expiresAt: Date },
  ): Promise<boolean> {
    if (!this.mailer.enabled) return false;
    try {
      const [names] = (await this.db.query(
        'SELECT w.name AS workspace, u.name AS inviter, u.email AS inviter_email FROM workspaces w, users u WHERE w.id = $1 AND u.id = $2',
        [workspaceId, inviterId],
      )) as Array<{ workspace: string; inviter: string; inviter_email: string }>;
      if (!names) return false;
      await this.mailer.send({ to: invitation.email, ...invitationMail({ ...names, ...invitation }) });
      return true;
    } catch (error) {
      this.logger.error({ err: error, workspaceId }, 'could not send an invitation e-mail');
      return false;
    }
  }

  async pending(workspaceId: string, now = new Date()): Promise<{ data: PendingInvitation[] }> {
    const rows = (await this.db.query(
      `SELECT i.id, i.email, i.role, i.invited_by, u.email AS inviter_email, i.created_at, i.expires_at
         FROM invitations i LEFT JOIN users u ON u.id = i.invited_by
        WHERE i.workspace_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > $2
        ORDER BY i.created_at DESC, i.id`,
      [workspaceId, now],
    )) as Array<{ id: string; email: string; role: InvitedRole; invited_by: string; inviter_email: string | null; created_at: Date; expires_at: Date }>;
    return {
      data: rows.map((row) => ({
        id: row.id,
        email: row.email,
        role: row.role,
        invited_by: { user_id: row.invited_by, email: row.inviter_email },
        created_at: row.created_at.toISOString(),
        expires_at: row.expires_at.toISOString(),
      })),
    };
  }

  async revoke(workspaceId: string, id: string, now = new Date()): Promise<void> {
    const revoked = looksLikeId('inv', id)
      ? rowsReturned(
          await this.db.query(
            `UPDATE invitations SET revoked_at = $3
              WHERE id = $1 AND workspace_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $3 RETURNING id`,
            [id, workspaceId, now],
          ),
        )
      : [];
    if (revoked.length === 0) throw new ServiceError('NOT_FOUND', 'No pending invitation with this id in the workspace.');
  }

  /**
   * The invitation behind a link, for the page it opens: anyone holding the link may read it, as anyone holding it
   * could forward it; joining still needs an account with the invited e-mail.
   */
  async preview(token: string, now = new Date()): Promise<InvitationPreview> {
    const [invitation] = (await this.db.query(
      `SELECT i.email, i.role, i.accepted_at, i.revoked_at, i.expires_at, w.name AS workspace, u.name AS inviter, u.email AS inviter_email
         FROM invitations i JOIN workspaces w ON w.id = i.workspace_id LEFT JOIN users u ON u.id = i.invited_by
        WHERE i.token_hash = $1`,
      [sha256(token)],
    )) as Array<InvitationRow & { workspace: string; inviter: string | null; inviter_email: string | null }>;
    if (!invitation) throw unusableInvitation('unknown');
    const state = invitationState(invitation, now);
    if (state !== 'pending') throw unusableInvitation(state, invitation.expires_at);
    return {
      email: invitation.email,
      role: invitation.role,
      workspace: { name: invitation.workspace },
      invited_by: { name: invitation.inviter, email: invitation.inviter_email },
      expires_at: invitation.expires_at.toISOString(),
    };
  }

  async accept(userId: string, token: string, now = new Date()): Promise<{ workspace: { id: string; name: string }; role: InvitedRole }> {
    const tokenHash = sha256(token);
    return this.db.transaction(async (tx) => {
      const [invitation] = (await tx.query(
        'SELECT id, workspace_id, email, role, accepted_at, revoked_at, expires_at FROM invitations WHERE token_hash = $1 FOR UPDATE',
        [tokenHash],
      )) as InvitationRow[];
      if (!invitation) throw unusableInvitation('unknown');
      const state = invitationState(invitation, now);
      if (state !== 'pending') throw unusableInvitation(state, invitation.expires_at);
      const [user] = (await tx.query('SELECT email FROM users WHERE id = $1', [userId])) as Array<{ email: string }>;
      if (user?.email !== invitation.email) {
        throw new ServiceError('FORBIDDEN', 'This invitation is for another e-mail address; sign in with the one it was sent to.');
      }
      await requireVerifiedAddress(tx, this.mailer, userId, forbidden, 'Verify your e-mail address before you accept an invitation: we mail you a code.');
      const joined = (await tx.query('INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING user_id', [
        invitation.workspace_id,
        userId,
        invitation.role,
      ])) as unknown[];
      if (joined.length === 0) throw new ServiceError('CONFLICT', 'You are already a member of this workspace.');
      await tx.query('UPDATE invitations SET accepted_at = $2 WHERE id = $1', [invitation.id, now]);
      const [workspace] = (await tx.query('SELECT id, name FROM workspaces WHERE id = $1', [invitation.workspace_id])) as Array<{ id: string; name: string }>;
      return { workspace: workspace!, role: invitation.role };
    });
  }

  private async refuseOverHourlyCeiling(tx: EntityManager, column: 'workspace_id' | 'invited_by', value: string, now: Date, who: string): Promise<void> {
    const sent = (await tx.query(`SELECT created_at FROM invitations WHERE ${column} = $1 AND created_at > $2`, [
      value,
      new Date(now.getTime() - 3_600_000),
    ])) as Array<{ created_at: Date }>;
    const wait = secondsUntilInvitationFits(
      sent.map((row) => row.created_at),
      now,
    );
    if (wait !== null) {
      throw new ServiceError('RATE_LIMITED', `Too many invitations sent by ${who} in the last hour; retry after ${wait} seconds.`, { retryAfter: wait });
    }
  }
}
