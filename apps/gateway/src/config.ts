import { EnvReader } from '@ds/platform';

export interface GatewayConfig {
  port: number;
  baseUrl: string;
  appUrl: string;
  adminToken: string | null;
  redisUrl: string;
  rateLimitStore: 'redis' | 'memory';
  /** How often expired application sessions are deleted; 0 turns the purge off. */
  sessionPurgeIntervalMs: number;
}

export function readGatewayConfig(env: EnvReader): GatewayConfig {
  const adminToken = env.string('ADMIN_TOKEN') ?? null;
  if (adminToken !== null && adminToken.length < 16) env.fail('ADMIN_TOKEN', 'must be at least 16 characters');
  return {
    port: env.int('PORT', 3000, 0, 65535),
    baseUrl: env.url('BASE_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/$/, ''),
    appUrl: env.url('APP_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/$/, ''),
    adminToken,
    redisUrl: env.url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis', 'rediss']),
    rateLimitStore: env.oneOf('RATE_LIMIT_STORE', 'redis', ['redis', 'memory'] as const),
    sessionPurgeIntervalMs: env.int('SESSION_PURGE_INTERVAL_MS', 3_600_000, 0, 86_400_000),
  };
}
