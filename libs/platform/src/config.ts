import { isIP } from 'node:net';
import { ServiceName } from '@ds/contracts';

/** Server-side limits of every database session, in milliseconds (0 turns one off); read here, applied by database.ts. */
export interface SessionTimeouts {
  /** Longest single statement: a runaway query is cancelled instead of holding a connection. */
  statementMs: number;
  /** Longest wait for a row or table lock: a blocked request fails instead of queueing behind another. */
  lockMs: number;
  /** Longest a transaction may sit idle: a stuck caller cannot keep its locks. */
  idleInTransactionMs: number;
}

export const DEFAULT_SESSION_TIMEOUTS: SessionTimeouts = { statementMs: 30_000, lockMs: 10_000, idleInTransactionMs: 60_000 };

/** A configuration problem worth exactly one line on stderr and a non-zero exit, never a stack trace. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Reads environment variables once, collecting every problem so that a misconfigured deployment learns
 * everything that is wrong in one start instead of one variable per crash loop.
 */
export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  string(name: string, fallback: string): string;
  string(name: string, fallback?: undefined): string | undefined;
  string(name: string, fallback?: string): string | undefined {
    const raw = this.env[name];
    return raw === undefined || raw === '' ? fallback : raw;
  }

  url(name: string, fallback: string, protocols: string[]): string;
  url(name: string, fallback: undefined, protocols: string[]): string | undefined;
  url(name: string, fallback: string | undefined, protocols: string[]): string | undefined {
    const raw = fallback === undefined ? this.string(name) : this.string(name, fallback);
    if (raw === undefined) return undefined;
    for (const candidate of raw.split(',')) {
      let parsed: URL;
      try {
        parsed = new URL(candidate.trim());
      } catch {
        this.problems.push(`${name} is not a URL (${redact(raw)})`);
        return raw;
      }
      if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
        this.problems.push(`${name} must use ${protocols.join(' or ')}:// (got ${redact(raw)})`);
        return raw;
      }
      if (!parsed.hostname) this.problems.push(`${name} has no host (${redact(raw)})`);
    }
    return raw;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max} (got ${raw})`);
      return fallback;
    }
    return value;
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) {
      this.problems.push(`${name} must be a number from ${min} to ${max} (got ${raw})`);
      return fallback;
    }
    return value;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    this.problems.push(`${name} must be true or false (got ${raw})`);
    return fallback;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T;
  oneOf<T extends string>(name: string, fallback: undefined, allowed: readonly T[]): T | undefined;
  oneOf<T extends string>(name: string, fallback: T | undefined, allowed: readonly T[]): T | undefined {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')} (got ${raw})`);
      return fallback;
    }
    return raw as T;
  }

  fail(name: string, message: string): void {
    this.problems.push(`${name} ${message}`);
  }

  /** Throws one ConfigError naming every problem found so far. */
  done(): void {
    if (this.problems.length > 0) throw new ConfigError(`invalid configuration: ${this.problems.join('; ')}`);
  }
}

/** Hides passwords in URLs before they reach a log line. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]+)@/g, '//$1:***@');
}

export const DEFAULT_OPS_PORTS: Record<ServiceName, number> = {
  gateway: 9400,
  'decision-runner': 9401,
  'engine-proxy': 9402,
  delivery: 9403,
  'billing-ledger': 9404,
  partner: 9405,
};

/**
 * SHUTDOWN_GRACE_MS defaults: long enough to finish the longest request a service may be holding. The
 * gateway waits up to 65 s for a run's reply, so its drain must outlast that.
 */
export const DEFAULT_SHUTDOWN_GRACE_MS: Record<ServiceName, number> = {
  gateway: 70_000,
  'decision-runner': 65_000,
  'engine-proxy': 60_000,
  delivery: 30_000,
  'billing-ledger': 15_000,
  partner: 10_000,
};

/** How this service proves itself to NATS: its own user (permissions limited to its subjects) and TLS files. */
export interface NatsAuth {
  user: string | null;
  password: string | null;
  tls: { caFile: string | null; certFile: string | null; keyFile: string | null } | null;
}

export interface BaseConfig {
  service: ServiceName;
  natsUrl: string;
  natsAuth: NatsAuth;
  databaseUrl: string;
  logLevel: string;
  opsPort: number;
  /** The address the ops port listens on: every interface for a pod's probes, loopback in the all-in-one launcher. */
  opsHost: string;
  shutdownGraceMs: number;
  /**
   * From SIGTERM, how long the service keeps taking new work while its readiness already answers 503, so that a
   * balancer that polls readiness stops sending before the listener closes; 0 drains at once.
   */
  shutdownDelayMs: number;
  runMigrations: boolean;
  databasePoolSize: number;
  databaseTimeouts: SessionTimeouts;
  /** OTLP/HTTP collector; spans are made and exported only when it is set. */
  otlpEndpoint: string | undefined;
  /** How far V8 lets the heap grow past what survived the last full collection, in percent; 0 leaves V8's own factor. */
  heapGrowingPercent: number;
}

function readNatsAuth(env: EnvReader): NatsAuth {
  const user = env.string('NATS_USER') ?? null;
  const password = env.string('NATS_PASSWORD') ?? null;
  if ((user === null) !== (password === null)) env.fail('NATS_USER', 'and NATS_PASSWORD must be set together');
  const caFile = env.string('NATS_TLS_CA_FILE') ?? null;
  const certFile = env.string('NATS_TLS_CERT_FILE') ?? null;
  const keyFile = env.string('NATS_TLS_KEY_FILE') ?? null;
  if ((certFile === null) !== (keyFile === null)) env.fail('NATS_TLS_CERT_FILE', 'and NATS_TLS_KEY_FILE must be set together');
  const tls = caFile !== null || certFile !== null ? { caFile, certFile, keyFile } : null;
  return { user, password, tls };
}

function readOpsHost(env: EnvReader): string {
  const host = env.string('OPS_HOST', '0.0.0.0');
  if (isIP(host) === 0 && host !== 'localhost') env.fail('OPS_HOST', `must be an IP address such as 127.0.0.1 or 0.0.0.0, or localhost (got ${host})`);
  return host;
}

export function readBaseConfig(service: ServiceName, env: EnvReader): BaseConfig {
  return {
    service,
    natsUrl: env.url('NATS_URL', 'nats://127.0.0.1:4222', ['nats', 'tls', 'ws', 'wss']),
    natsAuth: readNatsAuth(env),
    databaseUrl: env.url('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres', ['postgres', 'postgresql']),
    logLevel: env.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    opsPort: env.int('OPS_PORT', DEFAULT_OPS_PORTS[service], 0, 65535),
    opsHost: readOpsHost(env),
    shutdownGraceMs: env.int('SHUTDOWN_GRACE_MS', DEFAULT_SHUTDOWN_GRACE_MS[service], 0, 600_000),
    shutdownDelayMs: env.int('SHUTDOWN_DELAY_MS', 0, 0, 60_000),
    runMigrations: env.bool('MIGRATIONS_RUN', true),
    databasePoolSize: env.int('DATABASE_POOL_SIZE', 10, 1, 200),
    databaseTimeouts: {
      statementMs: env.int('DATABASE_STATEMENT_TIMEOUT_MS', DEFAULT_SESSION_TIMEOUTS.statementMs, 0, 86_400_000),
      lockMs: env.int('DATABASE_LOCK_TIMEOUT_MS', DEFAULT_SESSION_TIMEOUTS.lockMs, 0, 86_400_000),
      idleInTransactionMs: env.int('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', DEFAULT_SESSION_TIMEOUTS.idleInTransactionMs, 0, 86_400_000),
    },
    otlpEndpoint: env.url('OTEL_EXPORTER_OTLP_ENDPOINT', undefined, ['http', 'https']),
    heapGrowingPercent: env.int('HEAP_GROWING_PERCENT', 50, 0, 400),
  };
}
