import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { createLogger } from '@ds/platform';
import { ServiceError } from '@ds/contracts';
import { SessionPurge, INVITATIONS_KEPT_DAYS } from '../auth/session-purge';
import { GatewayConfig } from '../config';
import { openMailer } from '../mail/mailer';
import { gateway } from '../main';
import { INVITATIONS_PER_HOUR, PENDING_INVITATIONS_MAX } from './invitation-rules';
import { InvitationsService } from './invitations.service';
import { useMigratedDatabase } from '../../../../test/support/service-database';

/** Against a real PostgreSQL with the gateway's own migrations; time is passed in, so hours and days are exact. */
const NOW = new Date('2030-06-01T12:00:00Z');
const MINUTE = 60_000;
const DAY = 86_400_000;
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);

const database = useMigratedDatabase('gateway_invitations', gateway.database, 20);
let db: DataSource;
let invitations: InvitationsService;
const logger = createLogger('gateway', 'silent');

beforeAll(async () => {
  db = database.dataSource;
  invitations = new InvitationsService(db, { appUrl: 'https://app.example.com' } as GatewayConfig, openMailer(null, 'x@example.com', logger), logger);
});

async function user(email = `u-${randomUUID()}@example.com`): Promise<{ id: string; email: string }> {
  const id = `usr_${randomUUID().replace(/-/g, '')}`;
  await db.query(`INSERT INTO users (id, email, name, password_hash, failed_sign_ins) VALUES ($1, $2, 'U', 'x', 0)`, [id, email]);
  return { id, email };
}

async function workspace(): Promise<{ id: string; owner: string }> {
  const id = randomUUID();
  const owner = await user();
  await db.query(`INSERT INTO workspaces (id, name) VALUES ($1, 'Invites')`, [id]);
  await db.query(`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'owner')`, [id, owner.id]);
  return { id, owner: owner.id };
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('sending', () => {
  it('answers the token and link once, and stores only the token’s hash', async () => {
    const ws = await workspace();
    const sent = await invitations.invite(ws.id, ws.owner, { email: 'Ana@Example.com', role: 'member' }, NOW);
    expect(sent).toEqual({
      id: expect.stringMatching(/^inv_/),
      email: 'ana@example.com',
      role: 'member',
      emailed: false,
      created_at: NOW.toISOString(),
      expires_at: at(7 * DAY).toISOString(),
      token: expect.stringMatching(/^inv_tok_/),
      url: `https://app.example.com/invitations/accept?token=${sent.token}`,
    });
    const stored = JSON.stringify(await db.query('SELECT * FROM invitations WHERE id = $1', [sent.id]));
    expect(stored).not.toContain(sent.token);
    expect((await invitations.pending(ws.id, NOW)).data).toEqual([
      {
        id: sent.id,
        email: 'ana@example.com',
        role: 'member',
        invited_by: { user_id: ws.owner, email: expect.any(String) },
        created_at: NOW.toISOString(),
        expires_at: sent.expires_at,
      },
    ]);
  });

  it('refuses a current member with 409, and replaces a pending invitation to the same e-mail', async () => {
    const ws = await workspace();
    const member = await user();
    await db.query(`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'viewer')`, [ws.id, member.id]);
    expect((await failure(invitations.invite(ws.id, ws.owner, { email: member.email.toUpperCase(), role: 'admin' }, NOW))).code).toBe('CONFLICT');

    const first = await invitations.invite(ws.id, ws.owner, { email: 'bo@example.com', role: 'viewer' }, NOW);
    const second = await invitations.invite(ws.id, ws.owner, { email: 'bo@example.com', role: 'admin' }, at(MINUTE));
    expect((await invitations.pending(ws.id, at(MINUTE))).data.map((invitation) => [invitation.id, invitation.role])).toEqual([[second.id, 'admin']]);
    const newcomer = await user('bo@example.com');
    expect((await failure(invitations.accept(newcomer.id, first.token, at(2 * MINUTE)))).code).toBe('NOT_FOUND');
    await db.query('DELETE FROM users WHERE id = $1', [newcomer.id]);
  });

  it(`stops at ${INVITATIONS_PER_HOUR} an hour per workspace, with the wait until the oldest leaves the hour`, async () => {
    const ws = await workspace();
    const admins = await Promise.all([user(), user()]);
    for (const admin of admins) await db.query(`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'admin')`, [ws.id, admin.id]);
    // Sent a minute apart by two admins, so that neither sender's own ceiling is what stops them.
    for (let i = 0; i < INVITATIONS_PER_HOUR; i++) {
      await invitations.invite(ws.id, admins[i % 2]!.id, { email: `p${i}@example.com`, role: 'viewer' }, at(i * MINUTE));
    }
    const refused = await failure(invitations.invite(ws.id, ws.owner, { email: 'late@example.com', role: 'viewer' }, at(30 * MINUTE)));
    expect({ code: refused.code, details: refused.details }).toEqual({ code: 'RATE_LIMITED', details: { retryAfter: 30 * 60 } });
    // An hour after the first, one more fits.
    await invitations.invite(ws.id, ws.owner, { email: 'late@example.com', role: 'viewer' }, at(60 * MINUTE + 1_000));
  });

  it(`stops at ${INVITATIONS_PER_HOUR} an hour per sender, across workspaces`, async () => {
    const sender = await user();
    const spaces = await Promise.all([workspace(), workspace()]);
    for (const ws of spaces) await db.query(`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'admin')`, [ws.id, sender.id]);
    for (let i = 0; i < INVITATIONS_PER_HOUR; i++) {
      await invitations.invite(spaces[i % 2]!.id, sender.id, { email: `s${i}@example.com`, role: 'viewer' }, at(i * 1_000));
    }
    const refused = await failure(invitations.invite(spaces[0]!.id, sender.id, { email: 'one-more@example.com', role: 'viewer' }, at(60_000)));
    expect(refused.code).toBe('RATE_LIMITED');
    expect(refused.message).toContain('by you');
  });

  it(`keeps at most ${PENDING_INVITATIONS_MAX} pending, counting neither expired nor revoked ones`, async () => {
    const ws = await workspace();
    // Two hours apart in batches under the hourly ceiling; the first batch expires before the last is sent.
    const send = (i: number, when: Date) => invitations.invite(ws.id, ws.owner, { email: `q${i}@example.com`, role: 'viewer' }, when);
    const batches = [0, 1];
    let count = 0;
    for (const batch of batches) {
      for (let i = 0; i < 25; i++) await send(count++, at(batch * 2 * 60 * MINUTE + i * 1_000));
    }
    const full = await failure(send(count, at(5 * 60 * MINUTE)));
    expect(full).toMatchObject({ code: 'CONFLICT', details: { limit: PENDING_INVITATIONS_MAX } });
    const [oldest] = (await invitations.pending(ws.id, at(5 * 60 * MINUTE))).data.slice(-1);
    await invitations.revoke(ws.id, oldest!.id, at(5 * 60 * MINUTE));
    await send(count, at(5 * 60 * MINUTE));
    // Eight days on, the first batch has expired: 25 more fit.
    for (let i = 0; i < 25; i++) await send(++count, at(8 * DAY + i * 1_000));
  });
});

describe('revoking', () => {
  it('stops the link at once, and is 404 for an unknown, revoked or malformed id', async () => {
    const ws = await workspace();
    const sent = await invitations.invite(ws.id, ws.owner, { email: 'cy@example.com', role: 'member' }, NOW);
    await invitations.revoke(ws.id, sent.id, at(MINUTE));
    expect((await invitations.pending(ws.id, at(MINUTE))).data).toEqual([]);
    for (const id of [sent.id, 'inv_unknown000000000000', 'not-an-id\u0000']) {
      expect((await failure(invitations.revoke(ws.id, id, at(MINUTE)))).code).toBe('NOT_FOUND');
    }
    const cy = await user('cy@example.com');
    expect((await failure(invitations.accept(cy.id, sent.token, at(2 * MINUTE)))).code).toBe('NOT_FOUND');
  });

  it('is 404 from another workspace', async () => {
    const [ws, other] = await Promise.all([workspace(), workspace()]);
    const sent = await invitations.invite(ws.id, ws.owner, { email: 'dee@example.com', role: 'member' }, NOW);
    expect((await failure(invitations.revoke(other.id, sent.id, NOW))).code).toBe('NOT_FOUND');
    expect((await invitations.pending(ws.id, NOW)).data).toHaveLength(1);
  });
});

describe('accepting', () => {
  it('makes the invited e-mail a member with the role, once', async () => {
    const ws = await workspace();
    const sent = await invitations.invite(ws.id, ws.owner, { email: 'eve@example.com', role: 'admin' }, NOW);
    const eve = await user('eve@example.com');
    expect(await invitations.accept(eve.id, sent.token, at(MINUTE))).toEqual({ workspace: { id: ws.id, name: 'Invites' }, role: 'admin' });
    expect(await db.query('SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2', [ws.id, eve.id])).toEqual([{ role: 'admin' }]);
    expect((await failure(invitations.accept(eve.id, sent.token, at(2 * MINUTE)))).code).toBe('NOT_FOUND');
    expect((await invitations.pending(ws.id, at(2 * MINUTE))).data).toEqual([]);
  });

  it('refuses another account with 403 and leaves the invitation usable', async () => {
    const ws = await workspace();
    const sent = await invitations.invite(ws.id, ws.owner, { email: 'fay@example.com', role: 'member' }, NOW);
    const stranger = await user();
    expect((await failure(invitations.accept(stranger.id, sent.token, at(MINUTE)))).code).toBe('FORBIDDEN');
    const fay = await user('fay@example.com');
    expect((await invitations.accept(fay.id, sent.token, at(MINUTE))).role).toBe('member');
  });

  it('is 404 once expired, 409 for someone already a member', async () => {
    const ws = await workspace();
    const sent = await invitations.invite(ws.id, ws.owner, { email: 'gus@example.com', role: 'member' }, NOW);
    const gus = await user('gus@example.com');
    expect((await failure(invitations.accept(gus.id, sent.token, at(7 * DAY)))).code).toBe('NOT_FOUND');

    const again = await invitations.invite(ws.id, ws.owner, { email: 'gus@example.com', role: 'member' }, at(7 * DAY));
    await db.query(`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'viewer')`, [ws.id, gus.id]);
    expect((await failure(invitations.accept(gus.id, again.token, at(7 * DAY + MINUTE)))).code).toBe('CONFLICT');
  });

  it('lets only one of two racing acceptances through', async () => {
    const ws = await workspace();
    const sent = await invitations.invite(ws.id, ws.owner, { email: 'hal@example.com', role: 'member' }, NOW);
    const hal = await user('hal@example.com');
    const outcomes = await Promise.allSettled([invitations.accept(hal.id, sent.token, at(MINUTE)), invitations.accept(hal.id, sent.token, at(MINUTE))]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
  });
});

describe('previewing', () => {
  it('names the workspace, the inviter and the role of a pending invitation, to anyone holding the link', async () => {
    const ws = await workspace();
    const sent = await invitations.invite(ws.id, ws.owner, { email: 'ida@example.com', role: 'viewer' }, NOW);
    const [inviter] = (await db.query('SELECT email FROM users WHERE id = $1', [ws.owner])) as Array<{ email: string }>;
    expect(await invitations.preview(sent.token, at(MINUTE))).toEqual({
      email: 'ida@example.com',
      role: 'viewer',
      workspace: { name: 'Invites' },
      invited_by: { name: 'U', email: inviter!.email },
      expires_at: at(7 * DAY).toISOString(),
    });
  });

  it('says why a link is unusable: unknown, used, withdrawn or expired', async () => {
    const ws = await workspace();
    const reason = async (token: string, now: Date) => {
      const refusal = await failure(invitations.preview(token, now));
      expect(refusal.code).toBe('NOT_FOUND');
      return (refusal.details as { reason: string }).reason;
    };
    expect(await reason('inv_tok_never-issued', NOW)).toBe('unknown');

    const used = await invitations.invite(ws.id, ws.owner, { email: 'jo@example.com', role: 'member' }, NOW);
    await invitations.accept((await user('jo@example.com')).id, used.token, at(MINUTE));
    expect(await reason(used.token, at(2 * MINUTE))).toBe('accepted');

    const replaced = await invitations.invite(ws.id, ws.owner, { email: 'kim@example.com', role: 'member' }, NOW);
    await invitations.invite(ws.id, ws.owner, { email: 'kim@example.com', role: 'admin' }, at(MINUTE));
    expect(await reason(replaced.token, at(2 * MINUTE))).toBe('revoked');

    const late = await invitations.invite(ws.id, ws.owner, { email: 'lou@example.com', role: 'member' }, NOW);
    expect((await invitations.preview(late.token, at(7 * DAY - 1))).email).toBe('lou@example.com');
    expect(await reason(late.token, at(7 * DAY))).toBe('expired');
    expect((await failure(invitations.accept((await user('lou@example.com')).id, late.token, at(7 * DAY)))).details).toEqual({
      reason: 'expired',
      expired_at: at(7 * DAY).toISOString(),
    });
  });
});

describe('purging', () => {
  it(`deletes invitations sent more than ${INVITATIONS_KEPT_DAYS} days ago`, async () => {
    const ws = await workspace();
    const old = await invitations.invite(ws.id, ws.owner, { email: 'old@example.com', role: 'member' }, at(-INVITATIONS_KEPT_DAYS * DAY - 1));
    const recent = await invitations.invite(ws.id, ws.owner, { email: 'new@example.com', role: 'member' }, at(-DAY));
    const purge = new SessionPurge(db, { sessionPurgeIntervalMs: 0 } as GatewayConfig, createLogger('gateway', 'silent'));
    expect(await purge.purgeOldInvitations(NOW)).toBeGreaterThanOrEqual(1);
    const left = (await db.query('SELECT id FROM invitations WHERE workspace_id = $1', [ws.id])) as Array<{ id: string }>;
    expect(left.map((row) => row.id)).toEqual([recent.id]);
    expect(left.map((row) => row.id)).not.toContain(old.id);
  });
});
