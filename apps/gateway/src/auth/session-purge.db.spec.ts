import { DataSource } from 'typeorm';
import { createLogger } from '@ds/platform';
import { GatewayConfig } from '../config';
import { gateway } from '../main';
import { MAX_OWNED_WORKSPACES, WorkspacesService } from '../workspaces/workspaces.service';
import { SessionPurge, UNKNOWN_EMAIL_ATTEMPTS_KEPT_DAYS } from './session-purge';
import { useMigratedDatabase } from '../../../../test/support/service-database';

/** Against a real PostgreSQL with the gateway's own migrations. */
const logger = createLogger('gateway', 'silent');
const NOW = new Date('2030-06-01T12:00:00Z');
const HOUR = 3_600_000;

const database = useMigratedDatabase('gateway_retention', gateway.database, 20);
let db: DataSource;

beforeAll(() => {
  db = database.dataSource;
});

async function user(id: string): Promise<void> {
  await db.query(`INSERT INTO users (id, email, name, password_hash, failed_sign_ins) VALUES ($1, $2, 'U', 'x', 0)`, [id, `${id}@example.com`]);
}

describe('expired sessions', () => {
  it('are deleted by the purge, and sessions still valid stay', async () => {
    await user('usr_sessions');
    const expiries = [-48 * HOUR, -1, 1, 24 * HOUR];
    for (const [i, offset] of expiries.entries()) {
      await db.query('INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [
        `hash_${i}`,
        'usr_sessions',
        new Date(NOW.getTime() + offset),
      ]);
    }
    const purge = new SessionPurge(db, { sessionPurgeIntervalMs: 0 } as GatewayConfig, logger);
    expect(await purge.purge(NOW)).toBe(2);
    const left = (await db.query('SELECT token_hash FROM sessions ORDER BY token_hash')) as Array<{ token_hash: string }>;
    expect(left.map((row) => row.token_hash)).toEqual(['hash_2', 'hash_3']);
    expect(await purge.purge(NOW)).toBe(0);
  });
});

describe('wrong sign-ins for unknown e-mails', () => {
  it(`are forgotten after ${UNKNOWN_EMAIL_ATTEMPTS_KEPT_DAYS} days without another, and kept until then`, async () => {
    const DAY = 24 * HOUR;
    const ages = [UNKNOWN_EMAIL_ATTEMPTS_KEPT_DAYS * DAY + 1, UNKNOWN_EMAIL_ATTEMPTS_KEPT_DAYS * DAY - 1, DAY];
    for (const [i, age] of ages.entries()) {
      await db.query('INSERT INTO unknown_email_sign_ins (email_hash, failed_sign_ins, locked_until, last_attempt_at) VALUES ($1, 3, NULL, $2)', [
        `email_${i}`,
        new Date(NOW.getTime() - age),
      ]);
    }
    const purge = new SessionPurge(db, { sessionPurgeIntervalMs: 0 } as GatewayConfig, logger);
    expect(await purge.purgeUnknownEmailAttempts(NOW)).toBe(1);
    const left = (await db.query('SELECT email_hash FROM unknown_email_sign_ins ORDER BY email_hash')) as Array<{ email_hash: string }>;
    expect(left.map((row) => row.email_hash)).toEqual(['email_1', 'email_2']);
  });
});

describe('owned workspaces', () => {
  it(`stop at ${MAX_OWNED_WORKSPACES} per user even when the creations race`, async () => {
    await user('usr_owner');
    const workspaces = new WorkspacesService(db);
    const attempts = await Promise.allSettled(Array.from({ length: MAX_OWNED_WORKSPACES + 5 }, (_, i) => workspaces.create('usr_owner', `ws ${i}`)));
    expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).toHaveLength(MAX_OWNED_WORKSPACES);
    const refused = attempts.filter((attempt): attempt is PromiseRejectedResult => attempt.status === 'rejected');
    expect(refused).toHaveLength(5);
    for (const attempt of refused) expect(attempt.reason).toMatchObject({ code: 'CONFLICT' });
    const counted = (await db.query(`SELECT count(*)::int AS owned FROM memberships WHERE user_id = 'usr_owner' AND role = 'owner'`)) as Array<{
      owned: number;
    }>;
    expect(counted).toEqual([{ owned: MAX_OWNED_WORKSPACES }]);
  });
});
