import { ServiceError, ValidationIssue } from '@ds/contracts';
import { canonicalEmail } from '../auth/email-address';
import { Role } from '../entities';
import { GRANTED_ROLE_ISSUE, isGrantedRole } from './roles';

/** The spec's limits on invitations. */
export const INVITATION_VALID_DAYS = 7;
export const INVITATIONS_PER_HOUR = 30;
export const PENDING_INVITATIONS_MAX = 50;
const HOUR_MS = 3_600_000;

export type InvitedRole = Exclude<Role, 'owner'>;

/** An invitation's e-mail (in its canonical spelling, as accounts' are) and the role it grants below Owner. */
export function invitationInput(input: { email?: unknown; role?: unknown }, emailPattern: RegExp): { email: string; role: InvitedRole } {
  const issues: ValidationIssue[] = [];
  if (typeof input.email !== 'string' || !emailPattern.test(input.email)) issues.push({ path: 'email', message: 'must be an e-mail address' });
  if (!isGrantedRole(input.role)) issues.push({ ...GRANTED_ROLE_ISSUE });
  if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The invitation is not valid.', issues);
  return { email: canonicalEmail(input.email as string), role: input.role as InvitedRole };
}

/**
 * Whole seconds until one more invitation fits in the hour, given when the last ones were sent (any order),
 * or null when it fits now: the `limit`-th most recent must have left the hour.
 */
export function secondsUntilInvitationFits(sentAt: Date[], now: Date, limit = INVITATIONS_PER_HOUR): number | null {
  const inHour = sentAt.map((at) => at.getTime()).filter((at) => at > now.getTime() - HOUR_MS);
  if (inHour.length < limit) return null;
  const sorted = inHour.sort((a, b) => b - a);
  const leaves = sorted[limit - 1]! + HOUR_MS;
  return Math.max(1, Math.ceil((leaves - now.getTime()) / 1000));
}

export function invitationExpiry(now: Date): Date {
  return new Date(now.getTime() + INVITATION_VALID_DAYS * 86_400_000);
}

/** The e-mail that carries an invitation's link. */
export function invitationMail(invitation: { workspace: string; inviter: string; inviter_email: string; role: InvitedRole; url: string; expiresAt: Date }): {
  subject: string;
  text: string;
} {
  return {
    subject: `${invitation.inviter} invited you to ${invitation.workspace}`,
    text: [
      `${invitation.inviter} (${invitation.inviter_email}) invited you to join the workspace ${invitation.workspace} as ${invitation.role}.`,
      '',
      `Open this link and sign in with this e-mail address to join: ${invitation.url}`,
      '',
      `The link works once, until ${invitation.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC. If you did not expect it, ignore this e-mail.`,
    ].join('\n'),
  };
}

/** Where an invitation stands; only a pending one can be opened or accepted. */
export type InvitationState = 'pending' | 'accepted' | 'revoked' | 'expired';
export type UnusableReason = Exclude<InvitationState, 'pending'> | 'unknown';

export function invitationState(invitation: { accepted_at: Date | null; revoked_at: Date | null; expires_at: Date }, now: Date): InvitationState {
  if (invitation.accepted_at) return 'accepted';
  if (invitation.revoked_at) return 'revoked';
  return invitation.expires_at <= now ? 'expired' : 'pending';
}

const UNUSABLE_MESSAGES: Record<UnusableReason, string> = {
  unknown: 'This invitation link is not known. Check that the whole link was copied, or ask whoever invited you for a new one.',
  accepted: 'This invitation was already used. Sign in with the invited e-mail to reach the workspace, or ask for a new invitation.',
  revoked: 'This invitation was withdrawn or replaced by a newer one. Ask whoever invited you for a new link.',
  expired: `This invitation has expired (links last ${INVITATION_VALID_DAYS} days). Ask whoever invited you for a new one.`,
};

/**
 * The 404 for a link that cannot be used, saying why: the link's holder is the invitee, who can act on it (ask again,
 * or sign in), and a guessed token cannot reach this far (256 random bits).
 */
export function unusableInvitation(reason: UnusableReason, expiresAt?: Date): ServiceError {
  return new ServiceError(
    'NOT_FOUND',
    UNUSABLE_MESSAGES[reason],
    reason === 'expired' && expiresAt ? { reason, expired_at: expiresAt.toISOString() } : { reason },
  );
}

/** An invitation token as the link carries it; anything else is refused before the database is asked. */
export function invitationToken(token: unknown): string {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) {
    throw new ServiceError('INVALID_REQUEST', 'The invitation token is missing.', [{ path: 'token', message: 'must be the token of the invitation link' }]);
  }
  return token;
}
