import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ROOT } from './support/cluster';

const entry = (service: string) => join(ROOT, 'dist', 'apps', service, 'src', 'main.js');
const RUNNER = entry('decision-runner');

/** The services that seal secrets at rest, each with its key and the switch that allows the development key. */
const SEALING = [
  { service: 'engine-proxy', key: 'ENGINE_CREDENTIALS_KEY', devSwitch: 'ENGINE_CREDENTIALS_DEV_KEY' },
  { service: 'delivery', key: 'DELIVERY_SECRETS_KEY', devSwitch: 'DELIVERY_SECRETS_DEV_KEY' },
  { service: 'decision-runner', key: 'RUNNER_SECRETS_KEY', devSwitch: 'RUNNER_SECRETS_DEV_KEY' },
];

/** Starts a service outside the launcher; the runner gets its secrets key unless `env` says otherwise. */
function start(env: Record<string, string>, main = RUNNER) {
  const inherited = { ...process.env };
  for (const { key, devSwitch } of SEALING) {
    delete inherited[key];
    delete inherited[devSwitch];
  }
  const runnerKey = main === RUNNER ? { RUNNER_SECRETS_KEY: `e2e:${randomBytes(32).toString('base64')}` } : {};
  const result = spawnSync(process.execPath, [main], { env: { ...inherited, ...runnerKey, ...env, OPS_PORT: '0' }, encoding: 'utf8', timeout: 30_000 });
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

  it.each(SEALING)('$service refuses to start without $key outside the all-in-one launcher', ({ service, key, devSwitch }) => {
    const result = start({ NATS_URL: process.env.E2E_NATS_URL!, DATABASE_URL: process.env.E2E_DATABASE_URL!, [key]: '' }, entry(service));
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `${service}: invalid configuration: ${key} is required (openssl rand -base64 32); only the all-in-one launcher runs without it, with ${devSwitch}=true`,
    );
  });

  it.each(SEALING)('$service names a malformed key ring without echoing it', ({ service, key }) => {
    const result = start({ NATS_URL: process.env.E2E_NATS_URL!, DATABASE_URL: process.env.E2E_DATABASE_URL!, [key]: 'new:c2hvcnQ=' }, entry(service));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`${key} must hold keys of 32 bytes in base64`);
    expect(result.stderr).not.toContain('c2hvcnQ=');
  });
});
