import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtEngineSimulator, DELIVERY_WINDOW_MS, freshDatabase, LAUNCHER, startCluster, startNats } from './support/cluster';
import { startMailbox } from './support/mailbox';

export const ADMIN_TOKEN = 'e2e-admin-token-0123456789';

/**
 * One cluster for every e2e test: a fresh database, a private NATS, the engine simulator, and the
 * all-in-one launcher. Tests isolate themselves by working in workspaces of their own.
 */
export default async function globalSetup(): Promise<void> {
  if (!existsSync(LAUNCHER)) throw new Error('build first: npm run build (the e2e tests run the compiled services)');
  // Every cluster and gateway the tests start inherits these: scrypt at its floor keeps hundreds of
  // sign-ups quick, and a namespace of this run's own keeps its counters apart from any other run
  // sharing the machine's Redis.
  Object.assign(process.env, { PASSWORD_SCRYPT_N: '16384', RATE_LIMIT_KEY_PREFIX: `e2e-${randomBytes(6).toString('hex')}` });
  const { startEngineSimulator } = builtEngineSimulator();
  const mailDir = mkdtempSync(join(tmpdir(), 'ds-e2e-mail-'));
  const [databaseUrl, nats, simulator, mailbox] = await Promise.all([
    freshDatabase('ds_e2e'),
    startNats(),
    startEngineSimulator({ port: 0 }),
    startMailbox(mailDir),
  ]);
  const cluster = await startCluster(
    {
      DATABASE_URL: databaseUrl,
      NATS_URL: nats.url,
      ADMIN_TOKEN,
      // Short, so that the slow-body test sees a stalled request cut off within seconds.
      HTTP_REQUEST_TIMEOUT_MS: '4000',
      ENGINE_DEFAULT: 'llm',
      ENGINE_LLM_PROVIDER: 'openai',
      ENGINE_LLM_BASE_URL: `${simulator.url}/v1`,
      ENGINE_LLM_API_KEY: 'sim-key',
      ENGINE_LLM_MODEL: 'sim-standard',
      ENGINE_CHECKPOINT_BASE_URL: `${simulator.url}/v1`,
      ENGINE_CHECKPOINT_MODEL: 'ckpt-triage-7b',
      // Receivers and sync agents in the tests listen on loopback over plain http; the SSRF guard's refusals are
      // tested with a delivery service of their own (delivery-own.e2e-spec.ts) and at unit level.
      DELIVERY_ALLOW_PRIVATE_TARGETS: 'true',
      // The 7-hour schedule in about 5 seconds (Retry-After's cap scales with it: about 2 seconds).
      DELIVERY_RETRY_SCALE: '0.0002',
      DELIVERY_WINDOW_MS: String(DELIVERY_WINDOW_MS),
      // Secrets sealed at rest under keys of this run's own, as in a deployment, rather than the public development
      // keys the launcher falls back to.
      DELIVERY_SECRETS_KEY: `e2e:${randomBytes(32).toString('base64')}`,
      RUNNER_SECRETS_KEY: `e2e:${randomBytes(32).toString('base64')}`,
      // Sign-in codes and invitations go out by e-mail to a real SMTP server of the tests' own.
      SMTP_URL: mailbox.url,
      MAIL_FROM: 'Decision service tests <no-reply@example.com>',
    },
    'shared',
  );
  Object.assign(process.env, {
    E2E_BASE_URL: cluster.baseUrl,
    E2E_OPS_BASE: String(cluster.opsBase),
    E2E_SIMULATOR_URL: simulator.url,
    E2E_DATABASE_URL: databaseUrl,
    E2E_NATS_URL: nats.url,
    E2E_ADMIN_TOKEN: ADMIN_TOKEN,
    E2E_MAIL_DIR: mailDir,
  });
  (globalThis as Record<string, unknown>).__E2E__ = { cluster, nats, simulator, databaseUrl, mailbox, mailDir };
}
