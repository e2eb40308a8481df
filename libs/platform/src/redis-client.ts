import Redis from 'ioredis';
import { redact } from './config';
import { Logger } from './logger';

export interface RedisClientOptions {
  /** What the connection is for, named in its log lines. */
  purpose: string;
  /** Commands issued in one event-loop turn go to Redis in one write. */
  pipelined?: boolean;
  /** How long a connection attempt may take; 2 s unless said. */
  connectTimeoutMs?: number;
  /** A command that gets no answer in this time fails; none unless said. */
  commandTimeoutMs?: number;
  /**
   * Whether commands cut off by a lost connection are sent again once it is back; true unless said. A command
   * whose caller already counted it elsewhere must not be, or it would count twice.
   */
  resendAfterReconnect?: boolean;
  /** Lua scripts defined as commands of the client, each on one key. */
  scripts?: Record<string, string>;
}

/**
 * Every service's Redis connection, made one way: it connects when asked (`connect()`), and its commands fail at
 * once while Redis is away, instead of queueing behind the outage, so that each caller can fall back on what it does
 * without Redis (counting in its own process, reserving one by one). Connection errors are logged at debug: the
 * caller says what being without Redis means for it.
 */
export function redisClient<T extends Redis = Redis>(url: string, logger: Logger, options: RedisClientOptions): T {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    ...(options.commandTimeoutMs === undefined ? {} : { commandTimeout: options.commandTimeoutMs }),
    ...(options.resendAfterReconnect === false ? { autoResendUnfulfilledCommands: false } : {}),
    ...(options.pipelined ? { enableAutoPipelining: true } : {}),
  });
  for (const [name, lua] of Object.entries(options.scripts ?? {})) client.defineCommand(name, { numberOfKeys: 1, lua });
  client.on('error', (error) => logger.debug({ err: error, url: redact(url) }, `${options.purpose}: Redis connection error`));
  return client as T;
}
