import { EnvReader } from '@ds/platform';

export interface GatewayConfig {
  port: number;
  baseUrl: string;
  appUrl: string;
  adminToken: string | null;
  redisUrl: string;
  rateLimitStore: 'redis' | 'memory';
  requestTimeoutMs: number;
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
    requestTimeoutMs: env.int('HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
  };
}
