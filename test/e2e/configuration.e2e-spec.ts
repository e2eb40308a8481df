import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './support/cluster';

const RUNNER = join(ROOT, 'dist', 'apps', 'decision-runner', 'src', 'main.js');
const ENGINE_PROXY = join(ROOT, 'dist', 'apps', 'engine-proxy', 'src', 'main.js');

function start(env: Record<string, string>, entry = RUNNER) {
  const inherited = { ...process.env };
  delete inherited.ENGINE_CREDENTIALS_KEY;
  delete inherited.ENGINE_CREDENTIALS_DEV_KEY;
  const result = spawnSync(process.execPath, [entry], { env: { ...inherited, ...env, OPS_PORT: '0' }, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stderr: result.stderr.trim(), stdout: result.stdout.trim() };
}

describe('configuration is checked once at start', () => {
  it('exits with one clear line for a malformed NATS_URL', () => {
    const result = start({ NATS_URL: 'http://nowhere', DATABASE_URL: process.env.E2E_DATABASE_URL! });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('decision-runner: invalid configuration: NATS_URL must use nats or tls or ws or wss:// (got http://nowhere)');
  });

  it('names every problem at once', () => {
    const result = start({ NATS_URL: 'not a url', DATABASE_URL: 'mysql://x', SHUTDOWN_GRACE_MS: '-1' });
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('NATS_URL is not a URL');
    expect(result.stderr).toContain('DATABASE_URL must use postgres or postgresql://');
    expect(result.stderr).toContain('SHUTDOWN_GRACE_MS must be an integer');
  });

  it('exits with one line when PostgreSQL cannot be reached, hiding the password', () => {
    const result = start({ NATS_URL: process.env.E2E_NATS_URL!, DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:1/none' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^decision-runner: cannot reach PostgreSQL at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/none \(ECONNREFUSED\); set DATABASE_URL/,
    );
    expect(result.stderr).not.toContain('s3cret');
    expect(result.stderr.split('\n')).toHaveLength(1);
  });

  it('exits with one line when NATS cannot be reached', () => {
    const result = start({ NATS_URL: 'nats://127.0.0.1:1', DATABASE_URL: process.env.E2E_DATABASE_URL! });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^decision-runner: cannot reach NATS at nats:\/\/127\.0\.0\.1:1 \(.+\); set NATS_URL/);
    expect(result.stderr.split('\n')).toHaveLength(1);
  });

  it('engine-proxy refuses to start without ENGINE_CREDENTIALS_KEY outside the all-in-one launcher', () => {
    const result = start({ NATS_URL: process.env.E2E_NATS_URL!, DATABASE_URL: process.env.E2E_DATABASE_URL! }, ENGINE_PROXY);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      'engine-proxy: invalid configuration: ENGINE_CREDENTIALS_KEY is required (openssl rand -base64 32); only the all-in-one launcher runs without it, with ENGINE_CREDENTIALS_DEV_KEY=true',
    );
  });

  it('engine-proxy names a malformed key ring without echoing it', () => {
    const result = start(
      { NATS_URL: process.env.E2E_NATS_URL!, DATABASE_URL: process.env.E2E_DATABASE_URL!, ENGINE_CREDENTIALS_KEY: 'new:c2hvcnQ=' },
      ENGINE_PROXY,
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('ENGINE_CREDENTIALS_KEY must hold keys of 32 bytes in base64');
    expect(result.stderr).not.toContain('c2hvcnQ=');
  });
});
