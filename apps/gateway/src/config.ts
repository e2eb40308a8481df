import { isIP } from 'node:net';
import { EnvReader, Pace } from '@ds/platform';

/** Per-address and per-account ceilings on presenting credentials (counted in the rate-limit store). */
export interface CredentialLimitsConfig {
  /** Length of the per-address windows below, in seconds. */
  addressWindowSeconds: number;
  /** Wrong API keys, sessions and operator tokens per address and window before the address gets 429. */
  authFailuresPerAddress: number;
  signUpsPerAddress: number;
  signInsPerAddress: number;
  operatorRequestsPerAddress: number;
  /** Sign-up and sign-in attempts per e-mail and minute. */
  attemptsPerAccount: number;
}

export interface GatewayConfig {
  port: number;
  baseUrl: string;
  appUrl: string;
  /** Whether APP_URL was given: its default opens only on this machine. */
  appUrlSet: boolean;
  adminToken: string | null;
  redisUrl: string;
  rateLimitStore: 'redis' | 'memory';
  /** How long a run is awaited before the gateway answers 503 and keeps the Idempotency-Key reserved. */
  runReplyTimeoutMs: number;
  /** Namespace of this installation's counters in a Redis that may be shared. */
  rateLimitKeyPrefix: string;
  /** Proxies whose X-Forwarded-For names the client; anyone else is the client. */
  trustedProxies: string[];
  apiKeyCacheMax: number;
  passwordScryptN: number;
  credentialLimits: CredentialLimitsConfig;
  /** The pace of each application session on this replica (see limits/session-pacing.ts). */
  sessionPace: Pace;
  /** How often expired application sessions are deleted; 0 turns the purge off. */
  sessionPurgeIntervalMs: number;
  /** The whole request, headers and body, must arrive within this time. */
  requestTimeoutMs: number;
  /** Where e-mail goes out (sign-in codes, invitations); null: this installation sends none. */
  smtpUrl: string | null;
  /** The From of every e-mail sent. */
  mailFrom: string;
}

/** A request held longer than this is refused instead: well inside any client's timeout and the request timeout. */
export const SESSION_PACE_MAX_WAIT_MS = 5_000;

/** OWASP's current minimum for scrypt (N=2^17, r=8, p=1). */
export const DEFAULT_SCRYPT_N = 131_072;
const MIN_SCRYPT_N = 16_384;
const MAX_SCRYPT_N = 1_048_576;

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** An address, a CIDR range, or one of proxy-addr's named ranges. */
function isProxyEntry(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  // split always answers at least one part, so the address default is never used.
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export function readGatewayConfig(env: EnvReader): GatewayConfig {
  const adminToken = env.string('ADMIN_TOKEN') ?? null;
  if (adminToken !== null && adminToken.length < 16) env.fail('ADMIN_TOKEN', 'must be at least 16 characters');
  const passwordScryptN = env.int('PASSWORD_SCRYPT_N', DEFAULT_SCRYPT_N, MIN_SCRYPT_N, MAX_SCRYPT_N);
  if ((passwordScryptN & (passwordScryptN - 1)) !== 0) env.fail('PASSWORD_SCRYPT_N', `must be a power of two (got ${passwordScryptN})`);
  const rateLimitKeyPrefix = env.string('RATE_LIMIT_KEY_PREFIX', 'ds');
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(rateLimitKeyPrefix)) env.fail('RATE_LIMIT_KEY_PREFIX', 'must be 1 to 64 of A-Za-z0-9_.-');
  const trustedProxies = env
    .string('TRUSTED_PROXIES', PROXY_RANGE_NAMES.join(','))
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const untrustworthy = trustedProxies.filter((entry) => !isProxyEntry(entry));
  if (untrustworthy.length > 0)
    env.fail('TRUSTED_PROXIES', `must list addresses, CIDR ranges, loopback, linklocal or uniquelocal (got ${untrustworthy.join(', ')})`);
  return {
    port: env.int('PORT', 3000, 0, 65535),
    baseUrl: env.url('BASE_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/$/, ''),
    appUrl: env.url('APP_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/$/, ''),
    appUrlSet: env.string('APP_URL') !== undefined,
    adminToken,
    redisUrl: env.url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis', 'rediss']),
    rateLimitStore: env.oneOf('RATE_LIMIT_STORE', 'redis', ['redis', 'memory'] as const),
    // The default covers the longest engine deadline (30 s) plus LLM and agent destinations (25 s); the
    // ceiling stays under the idempotency lease (5 minutes), which must outlast any run still going.
    runReplyTimeoutMs: env.int('RUN_REPLY_TIMEOUT_MS', 65_000, 1_000, 240_000),
    rateLimitKeyPrefix,
    trustedProxies,
    apiKeyCacheMax: env.int('API_KEY_CACHE_MAX', 10_000, 1, 10_000_000),
    passwordScryptN,
    credentialLimits: {
      addressWindowSeconds: env.int('ADDRESS_LIMIT_WINDOW_SECONDS', 600, 1, 86_400),
      authFailuresPerAddress: env.int('AUTH_FAILURES_PER_ADDRESS', 20_000, 1, 10_000_000),
      signUpsPerAddress: env.int('SIGN_UPS_PER_ADDRESS', 2_000, 1, 10_000_000),
      signInsPerAddress: env.int('SIGN_INS_PER_ADDRESS', 2_000, 1, 10_000_000),
      operatorRequestsPerAddress: env.int('OPERATOR_REQUESTS_PER_ADDRESS', 6_000, 1, 10_000_000),
      attemptsPerAccount: env.int('SIGN_IN_ATTEMPTS_PER_ACCOUNT', 60, 1, 10_000_000),
    },
    sessionPace: {
      perSecond: env.int('APP_REQUESTS_PER_SECOND', 20, 1, 1_000_000),
      burst: env.int('APP_REQUEST_BURST', 500, 1, 1_000_000),
      maxWaitMs: SESSION_PACE_MAX_WAIT_MS,
    },
    sessionPurgeIntervalMs: env.int('SESSION_PURGE_INTERVAL_MS', 3_600_000, 0, 86_400_000),
    requestTimeoutMs: env.int('HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    smtpUrl: env.url('SMTP_URL', undefined, ['smtp', 'smtps']) ?? null,
    mailFrom: env.string('MAIL_FROM', 'Decision service <no-reply@localhost>'),
  };
}
