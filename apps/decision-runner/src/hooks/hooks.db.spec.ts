import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { createLogger } from '@ds/platform';
import { singleKeyring } from '@ds/sealing';
import { DecisionRunnerConfig } from '../config';
import { decisionRunner } from '../main';
import { defined } from '../../../../test/e2e/support/api';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { tokenHash } from './hook-credentials';
import { HooksService } from './hooks.service';
import { DecisionStore } from '../decisions/decision.store';
import { HookStore } from './hook.store';

/** The secret-URL state machine on a real PostgreSQL, concurrent changes included. */
const database = useMigratedDatabase('runner_hooks', decisionRunner.database, 8);
let db: DataSource;
let hooks: HooksService;

beforeAll(() => {
  db = database.dataSource;
  const config = { secretsKeys: singleKeyring(randomBytes(32)), secretsKeyIsDev: false } as DecisionRunnerConfig;
  hooks = new HooksService(DecisionStore.of(db), new HookStore(db), config, createLogger('decision-runner', 'silent'));
});

let sequence = 0;
async function decision(workspaceId = 'ws_hooks'): Promise<{ workspaceId: string; decisionId: string; slug: string }> {
  sequence += 1;
  const decisionId = `dec_hooks${String(sequence).padStart(11, '0')}`;
  const slug = `hooked-${sequence}`;
  await db.query(
    `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled)
     VALUES ($1, $2, $3, $3, '{}', 1, 1, true)`,
    [decisionId, workspaceId, slug],
  );
  return { workspaceId, decisionId, slug };
}

async function refusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (error instanceof ServiceError) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('HooksService', () => {
  it('walks off → on → secret → rotated → no secret → off, resolving only the current token', async () => {
    const ref = await decision();
    const { token } = await hooks.enable(ref);
    expect(token).toMatch(/^whk_[A-Za-z0-9]{32}$/);
    const stored: Array<{ token_hash: string }> = await db.query('SELECT token_hash FROM decision_hooks WHERE decision_id = $1', [ref.decisionId]);
    expect(stored).toEqual([{ token_hash: tokenHash(token!) }]);
    expect(await hooks.resolve(tokenHash(token!))).toEqual({ workspaceId: ref.workspaceId, decisionId: ref.decisionId, slug: ref.slug, secret: null });
    expect(await refusal(hooks.enable(ref))).toBe('CONFLICT');

    const { secret, dropped: afterSecret } = await hooks.createSecret(ref);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(afterSecret).toEqual([tokenHash(token!)]);
    expect((await hooks.resolve(tokenHash(token!)))?.secret).toBe(secret);

    const rotated = await hooks.rotate(ref);
    expect(rotated.dropped).toEqual([tokenHash(token!)]);
    expect(await hooks.resolve(tokenHash(token!))).toBeNull();
    expect((await hooks.resolve(tokenHash(rotated.token!)))?.secret).toBe(secret);

    expect((await hooks.deleteSecret(ref)).dropped).toEqual([tokenHash(rotated.token!)]);
    expect((await hooks.resolve(tokenHash(rotated.token!)))?.secret).toBeNull();
    expect(await refusal(hooks.deleteSecret(ref))).toBe('NOT_FOUND');

    expect((await hooks.disable(ref)).dropped).toEqual([tokenHash(rotated.token!)]);
    expect(await hooks.resolve(tokenHash(rotated.token!))).toBeNull();
    expect(await refusal(hooks.disable(ref))).toBe('NOT_FOUND');
    expect(await refusal(hooks.rotate(ref))).toBe('CONFLICT');
    expect(await refusal(hooks.createSecret(ref))).toBe('CONFLICT');
    expect(await refusal(hooks.deleteSecret(ref))).toBe('CONFLICT');
  });

  it('refuses a decision of another workspace', async () => {
    const ref = await decision('ws_owner');
    for (const change of [hooks.enable, hooks.disable, hooks.rotate, hooks.createSecret, hooks.deleteSecret]) {
      expect(await refusal(change.call(hooks, { workspaceId: 'ws_other', decisionId: ref.decisionId }))).toBe('NOT_FOUND');
    }
  });

  it('turns a URL on once when asked at the same time', async () => {
    const ref = await decision();
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => hooks.enable(ref)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    for (const outcome of outcomes) if (outcome.status === 'rejected') expect((outcome.reason as ServiceError).code).toBe('CONFLICT');
  });

  it('chains concurrent rotations: every token but the last is reported dropped exactly once', async () => {
    const ref = await decision();
    const first = (await hooks.enable(ref)).token!;
    const rotations = await Promise.all(Array.from({ length: 8 }, () => hooks.rotate(ref)));
    const issued = [first, ...rotations.map((rotation) => rotation.token!)].map(tokenHash);
    const dropped = rotations.flatMap((rotation) => rotation.dropped);
    const hookRows: Array<{ token_hash: string }> = await db.query('SELECT token_hash FROM decision_hooks WHERE decision_id = $1', [ref.decisionId]);
    const current = defined(hookRows[0]).token_hash;
    expect([...dropped, current].sort()).toEqual([...issued].sort());
    for (const hash of dropped) expect(await hooks.resolve(hash)).toBeNull();
  });
});
