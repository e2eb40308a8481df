import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { gateway } from '../main';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { VerifiedAddresses1796041733120 } from './1796041733120-verified-addresses';

/**
 * The migration that rewrites stored addresses to their canonical spelling, run again over rows written the way
 * earlier versions wrote them (lower-cased only, in whatever Unicode form they arrived).
 */
const database = useMigratedDatabase('gateway_addresses', gateway.database, 4);
let db: DataSource;

beforeAll(() => {
  db = database.dataSource;
});

async function user(email: string, createdAt: string): Promise<string> {
  const id = `usr_${randomUUID().replace(/-/g, '')}`;
  await db.query(`INSERT INTO users (id, email, name, password_hash, failed_sign_ins, created_at) VALUES ($1, $2, 'U', 'x', 0, $3)`, [id, email, createdAt]);
  return id;
}

const emailOf = async (id: string) => ((await db.query('SELECT email FROM users WHERE id = $1', [id])) as Array<{ email: string }>)[0]!.email;
const collisions = async () =>
  ((await db.query('SELECT user_id, canonical_email, kept_by FROM email_collisions ORDER BY canonical_email')) as Array<Record<string, string>>).map((row) => ({
    ...row,
  }));

async function migrate(): Promise<void> {
  const runner = db.createQueryRunner();
  try {
    await new VerifiedAddresses1796041733120().up(runner);
  } finally {
    await runner.release();
  }
}

describe('canonical addresses for stored rows', () => {
  it('rewrites spellings, gives a collided address to one account and lists the others, and does it once', async () => {
    const tag = randomUUID().slice(0, 8);
    const decomposedOlder = await user(`rene\u0301-${tag}@example.com`, '2020-01-01T00:00:00Z');
    const composedNewer = await user(`ren\u00c9-${tag}@example.com`, '2021-01-01T00:00:00Z');
    const alone = await user(`stra\u00dfe-${tag}@example.com`, '2020-01-01T00:00:00Z');
    const holder = await user(`anna-${tag}@example.com`, '2022-01-01T00:00:00Z');
    const upperOlder = await user(`ANNA-${tag}@example.com`, '2019-01-01T00:00:00Z');
    const untouched = await user(`plain-${tag}@example.com`, '2020-01-01T00:00:00Z');
    const invitationId = `inv_${tag}`;
    const [ws] = (await db.query(`INSERT INTO workspaces (id, name) VALUES ($1, 'W') RETURNING id`, [randomUUID()])) as Array<{ id: string }>;
    await db.query(
      `INSERT INTO invitations (id, workspace_id, email, role, invited_by, token_hash, expires_at) VALUES ($1, $2, $3, 'viewer', $4, $5, now() + interval '1 day')`,
      [invitationId, ws!.id, `Mixe\u0301D-${tag}@Example.com`, holder, randomUUID()],
    );

    await migrate();

    // The oldest of the accounts whose spelling changes takes the address; the other keeps its old one.
    expect(await emailOf(decomposedOlder)).toBe(`ren\u00e9-${tag}@example.com`);
    expect(await emailOf(composedNewer)).toBe(`ren\u00c9-${tag}@example.com`);
    expect(await emailOf(alone)).toBe(`strasse-${tag}@example.com`);
    // An account already stored under the canonical spelling keeps it, older or not.
    expect(await emailOf(holder)).toBe(`anna-${tag}@example.com`);
    expect(await emailOf(upperOlder)).toBe(`ANNA-${tag}@example.com`);
    expect(await emailOf(untouched)).toBe(`plain-${tag}@example.com`);
    const listed = [
      { user_id: upperOlder, canonical_email: `anna-${tag}@example.com`, kept_by: holder },
      { user_id: composedNewer, canonical_email: `ren\u00e9-${tag}@example.com`, kept_by: decomposedOlder },
    ];
    expect(await collisions()).toEqual(listed);
    const [invitation] = (await db.query('SELECT email FROM invitations WHERE id = $1', [invitationId])) as Array<{ email: string }>;
    expect(invitation!.email).toBe(`mix\u00e9d-${tag}@example.com`);

    await migrate();
    expect(await emailOf(composedNewer)).toBe(`ren\u00c9-${tag}@example.com`);
    expect(await collisions()).toEqual(listed);
  });
});
