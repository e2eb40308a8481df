import { rmSync } from 'node:fs';
import { dropDatabase } from './support/cluster';

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as Record<string, any>).__E2E__;
  if (!state) return;
  await state.cluster.stop();
  await state.simulator.close();
  await state.nats.stop();
  await state.mailbox.close();
  rmSync(state.mailDir, { recursive: true, force: true });
  await dropDatabase(state.databaseUrl);
}
