import { existsSync } from 'node:fs';
import { builtEngineSimulator, freshDatabase, LAUNCHER, startCluster, startNats } from './support/cluster';

export const ADMIN_TOKEN = 'e2e-admin-token-0123456789';

/**
 * One cluster for every e2e test: a fresh database, a private NATS, the engine simulator, and the
 * all-in-one launcher. Tests isolate themselves by working in workspaces of their own.
 */
export default async function globalSetup(): Promise<void> {
  if (!existsSync(LAUNCHER)) throw new Error('build first: npm run build (the e2e tests run the compiled services)');
  const { startEngineSimulator } = builtEngineSimulator();
  const [databaseUrl, nats, simulator] = await Promise.all([freshDatabase('ds_e2e'), startNats(), startEngineSimulator({ port: 0 })]);
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
  });
  (globalThis as Record<string, unknown>).__E2E__ = { cluster, nats, simulator, databaseUrl };
}
