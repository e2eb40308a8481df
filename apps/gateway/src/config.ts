import { EnvReader } from '@ds/platform';

export interface GatewayConfig {
  port: number;
  baseUrl: string;
  appUrl: string;
  adminToken: string | null;
  redisUrl: string;
  rateLimitStore: 'redis' | 'memory';
  /** How long a run is awaited before the gateway answers 503 and keeps the Idempotency-Key reserved. */
  runReplyTimeoutMs: number;
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
    // The default covers the longest engine deadline (30 s) plus LLM and agent destinations (25 s); the
    // ceiling stays under the idempotency lease (5 minutes), which must outlast any run still going.
    runReplyTimeoutMs: env.int('RUN_REPLY_TIMEOUT_MS', 65_000, 1_000, 240_000),
  };
}
