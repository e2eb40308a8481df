import { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1763780000000 implements MigrationInterface {
  name = 'Initial1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id text PRIMARY KEY,
        email text NOT NULL UNIQUE,
        name text NOT NULL,
        password_hash text NOT NULL,
        failed_sign_ins integer NOT NULL DEFAULT 0,
        locked_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE sessions (
        token_hash text PRIMARY KEY,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE workspaces (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE memberships (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
        PRIMARY KEY (workspace_id, user_id)
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        name text NOT NULL,
        mode text NOT NULL CHECK (mode IN ('live', 'test')),
        key_hash text NOT NULL UNIQUE,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query('CREATE INDEX api_keys_workspace_active ON api_keys (workspace_id) WHERE revoked_at IS NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['api_keys', 'memberships', 'workspaces', 'sessions', 'users']) await q.query(`DROP TABLE ${table}`);
  }
}
