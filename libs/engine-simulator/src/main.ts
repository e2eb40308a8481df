import { startEngineSimulator } from './index';

/** One JSON line per event, like the services' logs, so the same collectors can read it. */
function log(entry: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

async function main(): Promise<void> {
  const rawPort = process.env.ENGINE_SIMULATOR_PORT || '8090';
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`ENGINE_SIMULATOR_PORT must be a port number, got ${JSON.stringify(rawPort)}`);
  }
  const rawDelay = process.env.ENGINE_SIMULATOR_DELAY_MS || '0';
  const delayMs = Number(rawDelay);
  if (!Number.isInteger(delayMs) || delayMs < 0) {
    throw new Error(`ENGINE_SIMULATOR_DELAY_MS must be a whole number of milliseconds, got ${JSON.stringify(rawDelay)}`);
  }
  const simulator = await startEngineSimulator({
    delayMs,
    port,
    host: process.env.ENGINE_SIMULATOR_HOST || undefined,
    apiKey: process.env.ENGINE_SIMULATOR_API_KEY || undefined,
  });
  log({ level: 'info', msg: 'engine simulator listening', url: simulator.url, delay_ms: delayMs });

  const stop = (signal: NodeJS.Signals) => {
    simulator.close().then(
      () => log({ level: 'info', msg: 'engine simulator stopped', signal }),
      (error: unknown) => {
        log({ level: 'error', msg: 'engine simulator failed to stop', signal, error: String(error) });
        process.exitCode = 1;
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  log({ level: 'error', msg: 'engine simulator failed to start', error: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
});
